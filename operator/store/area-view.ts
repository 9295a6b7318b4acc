/**
 * How an engine hands out its repositories: each area object (one class per area, ./sql) is wrapped once
 * with the engine's runner (SQLite: the mutex, durability and the transaction guard; PostgreSQL: a pooled
 * connection per call, or the transaction's connection). The wrapper takes the methods the area's class
 * defines, so no list of operations is kept anywhere: a method added to an area's class and interface is
 * served by both engines as it is.
 */
import type { Repositories, StoreArea } from "./store";

type Method = (...args: unknown[]) => unknown;

const methodsByPrototype = new WeakMap<object, readonly string[]>();

/**
 * The names of the methods `area`'s class defines (its prototype chain below `Object.prototype`), and of
 * its own function-valued properties (an area written as an object literal). Cached per class.
 */
function methodNames(area: object): readonly string[] {
  const prototype = Object.getPrototypeOf(area) as object | null;
  const own = Object.keys(area).filter(
    (name) => typeof (area as Record<string, unknown>)[name] === "function",
  );
  if (prototype === null || prototype === Object.prototype) return own;
  let names = methodsByPrototype.get(prototype);
  if (names === undefined) {
    const found = new Set<string>();
    for (
      let p: object | null = prototype;
      p !== null && p !== Object.prototype;
      p = Object.getPrototypeOf(p)
    ) {
      for (const name of Object.getOwnPropertyNames(p)) {
        if (name !== "constructor" && typeof Object.getOwnPropertyDescriptor(p, name)?.value === "function") {
          found.add(name);
        }
      }
    }
    names = [...found];
    methodsByPrototype.set(prototype, names);
  }
  return own.length === 0 ? names : [...new Set([...names, ...own])];
}

/**
 * A view of `area`: each of its methods replaced by `wrap(name, method)` (`method` unbound: call it with
 * `area` as `this`). The view has the area's type; nothing else of the area is reachable through it.
 */
export function wrapMethods<R extends object>(area: R, wrap: (name: string, method: Method) => Method): R {
  const view: Record<string, Method> = {};
  for (const name of methodNames(area)) {
    view[name] = wrap(name, (area as Record<string, Method>)[name]);
  }
  return view as R;
}

/** A bundle with each area replaced by `view(area, key)`. */
export function mapRepositories(
  areas: Repositories,
  view: <K extends StoreArea>(area: Repositories[K], key: K) => Repositories[K],
): Repositories {
  const out: Partial<Record<StoreArea, unknown>> = {};
  for (const key of Object.keys(areas) as StoreArea[]) out[key] = view(areas[key], key);
  return out as Repositories;
}

/**
 * {@link mapRepositories}, each view built on first use (a transaction's handle: most bodies use one or two
 * areas, so the others are never wrapped).
 */
export function lazyRepositories(
  areas: Repositories,
  view: <K extends StoreArea>(area: Repositories[K], key: K) => Repositories[K],
): Repositories {
  const bundle = {} as Record<StoreArea, unknown>;
  for (const key of Object.keys(areas) as StoreArea[]) {
    Object.defineProperty(bundle, key, {
      enumerable: true,
      configurable: true,
      get() {
        const value = view(areas[key], key);
        Object.defineProperty(bundle, key, { value, enumerable: true });
        return value;
      },
    });
  }
  return bundle as unknown as Repositories;
}

/**
 * A store's areas as its own fields (`store.collateral`, …), each set once to the engine's view of that
 * area. Both engines' stores extend it, so the list of areas is written here and in {@link Repositories}
 * only; a new area added to {@link Repositories} fails to compile here until it is listed.
 *
 * `views` builds the views from the store being constructed (`Self`): they call back into it, and a
 * subclass cannot name `this` before `super()`.
 */
export abstract class StoreOfAreas<Self> implements Repositories {
  readonly collateral: Repositories["collateral"];
  readonly reserves: Repositories["reserves"];
  readonly guarantees: Repositories["guarantees"];
  readonly issuance: Repositories["issuance"];
  readonly cycles: Repositories["cycles"];
  readonly netting: Repositories["netting"];
  readonly chainJournal: Repositories["chainJournal"];
  readonly webhooks: Repositories["webhooks"];
  readonly authSessions: Repositories["authSessions"];
  readonly operatorState: Repositories["operatorState"];

  protected constructor(views: (store: Self) => Repositories) {
    const view = views(this as unknown as Self);
    this.collateral = view.collateral;
    this.reserves = view.reserves;
    this.guarantees = view.guarantees;
    this.issuance = view.issuance;
    this.cycles = view.cycles;
    this.netting = view.netting;
    this.chainJournal = view.chainJournal;
    this.webhooks = view.webhooks;
    this.authSessions = view.authSessions;
    this.operatorState = view.operatorState;
  }
}
