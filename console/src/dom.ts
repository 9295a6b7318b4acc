/**
 * Element construction without innerHTML: every value shown comes from the network and is set as text, so
 * nothing Core (or a chain event it indexed) returns can inject markup.
 */
type Child = Node | string | number | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string> = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    element.append(typeof child === "number" ? String(child) : child);
  }
  return element;
}

/** A definition list row pair. */
export function row(label: string, ...value: (Child | Child[])[]): HTMLElement[] {
  return [h("dt", {}, label), h("dd", {}, ...value)];
}

/** A state message (loading, empty, error) that says what to do next. */
export function stateMessage(
  kind: "loading" | "empty" | "error",
  title: string,
  ...advice: string[]
): HTMLElement {
  return h(
    "div",
    { class: `state ${kind}`, role: kind === "error" ? "alert" : "status", "data-state": kind },
    h("p", { class: "title" }, title),
    ...advice.map((line) => h("p", {}, line)),
  );
}
