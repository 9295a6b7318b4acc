import { expect } from "chai";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { GUARANTEE_STATES, type GuaranteeState } from "../../sdk/guarantee-states";
import {
  GUARDS,
  GuaranteeTransitions,
  initialState,
  nextState,
  resolveTransition,
  TRANSITION_TRIGGERS,
  TRANSITIONS,
  transitionTableMarkdown,
  type TransitionFacts,
  type TransitionStore,
  type TransitionTrigger,
} from "../../operator/guarantees/transitions";
import { createLogger, silentLogger } from "../../operator/logger";
import { CoreMetrics } from "../../operator/metrics";
import type { Store } from "../../operator/store";

const TRIGGERS = Object.keys(TRANSITION_TRIGGERS) as TransitionTrigger[];
/** Every combination of what the guards read. */
const FACT_VARIANTS: TransitionFacts[] = [1, 2].flatMap((version) =>
  [true, false].map((payerIsDebtor) => ({ version: version as 1 | 2, payerIsDebtor })),
);

/** An in-memory TransitionStore: one guarantee per id, the compare-and-set as the store's. */
class MemoryStates implements TransitionStore {
  readonly states = new Map<string, GuaranteeState>();
  writes = 0;

  async transitionGuarantee(id: string, from: readonly GuaranteeState[], to: GuaranteeState) {
    const state = this.states.get(id);
    if (state === undefined || !from.includes(state)) return null;
    this.states.set(id, to);
    this.writes++;
    return state;
  }

  async stateOf(id: string) {
    return this.states.get(id) ?? null;
  }
}

/** A real pino logger writing its JSON lines into `lines`. */
function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n")) if (line.trim()) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: createLogger("info", sink), lines };
}

function machine() {
  const refused: string[] = [];
  const { logger, lines } = capturingLogger();
  const transitions = new GuaranteeTransitions({
    logger,
    refusals: { guaranteeTransitionRefused: (trigger) => refused.push(trigger) },
  });
  return { transitions, refused, lines };
}

/** The rows of the table (read directly, not through the resolver) that move `state` on `trigger`. */
function rowsFor(state: GuaranteeState, trigger: TransitionTrigger, facts: TransitionFacts) {
  return TRANSITIONS.filter(
    (r) => r.trigger === trigger && r.from.includes(state) && (!r.guard || GUARDS[r.guard](facts)),
  );
}

describe("guarantee transition table (operator/guarantees/transitions.ts)", () => {
  it("lists only known states and triggers, and every state is reachable", () => {
    const reached = new Set<GuaranteeState>();
    for (const r of TRANSITIONS) {
      expect(TRIGGERS).to.include(r.trigger);
      for (const s of [...r.from, r.to]) expect(GUARANTEE_STATES).to.include(s);
      reached.add(r.to);
    }
    expect([...reached].sort()).to.deep.equal([...GUARANTEE_STATES].sort());
    for (const trigger of TRIGGERS) expect(TRANSITIONS.some((r) => r.trigger === trigger)).to.equal(true);
  });

  it("leads each trigger, under any facts, to one state at most (a compare-and-set can write it)", () => {
    for (const trigger of TRIGGERS) {
      for (const facts of FACT_VARIANTS) {
        const targets = new Set(
          TRANSITIONS.filter((r) => r.trigger === trigger && (!r.guard || GUARDS[r.guard](facts))).map(
            (r) => r.to,
          ),
        );
        expect(targets.size, `${trigger} ${JSON.stringify(facts)}`).to.be.at.most(1);
      }
    }
  });

  it("issues V1 payable and V2 pending validation", () => {
    expect(initialState(1)).to.equal("FINALIZED_PAYABLE");
    expect(initialState(2)).to.equal("PENDING_VALIDATION");
  });

  it("performs every allowed transition, and returns the state it left", async () => {
    let moves = 0;
    for (const rule of TRANSITIONS) {
      for (const facts of FACT_VARIANTS.filter((f) => !rule.guard || GUARDS[rule.guard](f))) {
        for (const from of rule.from) {
          expect(nextState(from, rule.trigger, facts)).to.equal(rule.to);
          const { transitions, refused } = machine();
          const store = new MemoryStates();
          store.states.set("0xg", from);
          const previous = await transitions.apply(store, "0xg", { trigger: rule.trigger, facts });
          expect(previous, `${from} -${rule.trigger}-> ${rule.to}`).to.equal(from);
          expect(store.states.get("0xg")).to.equal(rule.to);
          expect(refused).to.deep.equal([]);
          moves++;
        }
      }
    }
    expect(moves).to.be.greaterThan(20);
  });

  it("refuses every move not in the table: nothing written, logged and counted", async () => {
    let refusals = 0;
    for (const trigger of TRIGGERS) {
      for (const facts of FACT_VARIANTS) {
        for (const state of GUARANTEE_STATES) {
          if (rowsFor(state, trigger, facts).length > 0) continue;
          expect(nextState(state, trigger, facts), `${state} ${trigger}`).to.equal(null);
          const { transitions, refused, lines } = machine();
          const store = new MemoryStates();
          store.states.set("0xg", state);
          expect(await transitions.apply(store, "0xg", { trigger, facts })).to.equal(null);
          expect(store.states.get("0xg")).to.equal(state);
          expect(store.writes).to.equal(0);
          expect(refused).to.deep.equal([trigger]);
          const line = lines.find((l) => l.event === "guarantee_transition_refused");
          expect(line).to.include({ guarantee_id: "0xg", trigger, state });
          refusals++;
        }
      }
    }
    expect(refusals).to.be.greaterThan(100);
  });

  it("refuses a sample of wrong moves by name", () => {
    const refused: [GuaranteeState, TransitionTrigger, TransitionFacts][] = [
      ["SETTLED", "remunerated", {}],
      ["REMUNERATED", "cycle_vetoed", {}],
      ["DEFAULT_REMUNERATED", "cycle_vetoed", {}],
      ["CANCELLED", "payer_finalized", { version: 2 }],
      ["FINALIZED_PAYABLE", "payer_finalized", { version: 2 }],
      ["PENDING_VALIDATION", "payer_finalized", { version: 1 }],
      ["DISPUTED", "validation_failed", { version: 2 }],
      ["PENDING_VALIDATION", "cycle_committed", { payerIsDebtor: true }],
      ["CANCELLED", "foreign_netted", { payerIsDebtor: false }],
      ["SETTLED", "debit_paid", {}],
      ["FINALIZED_PAYABLE", "debit_voided", {}],
    ];
    for (const [state, trigger, facts] of refused) {
      expect(nextState(state, trigger, facts), `${state} ${trigger}`).to.equal(null);
    }
  });

  it("refuses an unknown guarantee and a state other than the one the caller read", async () => {
    const { transitions, refused, lines } = machine();
    const store = new MemoryStates();
    expect(await transitions.apply(store, "0xnone", { trigger: "debit_paid" })).to.equal(null);
    expect(lines[0]).to.include({ event: "guarantee_transition_refused", state: null });
    store.states.set("0xg", "DISPUTED");
    const request = { trigger: "validation_expired" as const, facts: { version: 2 as const } };
    expect(await transitions.apply(store, "0xg", { ...request, expected: "PENDING_VALIDATION" })).to.equal(
      null,
    );
    expect(store.states.get("0xg")).to.equal("DISPUTED");
    expect(refused).to.deep.equal(["debit_paid", "validation_expired"]);
    expect(await transitions.apply(store, "0xg", { ...request, expected: "DISPUTED" })).to.equal("DISPUTED");
    expect(store.states.get("0xg")).to.equal("CANCELLED");
  });

  it("counts refusals in surety_guarantee_transitions_refused_total{trigger}", async () => {
    const metrics = new CoreMetrics({} as Store);
    const transitions = new GuaranteeTransitions({ logger: silentLogger(), refusals: metrics });
    const store = new MemoryStates();
    store.states.set("0xg", "SETTLED");
    await transitions.apply(store, "0xg", { trigger: "remunerated" });
    await transitions.apply(store, "0xg", { trigger: "remunerated" });
    const metric = await metrics.registry
      .getSingleMetric("surety_guarantee_transitions_refused_total")!
      .get();
    expect(metric.values).to.deep.equal([{ value: 2, labels: { trigger: "remunerated" } }]);
  });

  it("throws when a guarded trigger is not given what its guard reads (a wiring mistake)", () => {
    expect(() => resolveTransition("cycle_committed")).to.throw(/payerIsDebtor/);
    expect(() => resolveTransition("payer_finalized", {})).to.throw(/version/);
  });

  it("is printed in docs/protocol.md, 'Transition table', exactly", () => {
    const doc = readFileSync(join(__dirname, "../../docs/protocol.md"), "utf8");
    const match = /<!-- transition-table:begin -->\n([\s\S]*?)\n<!-- transition-table:end -->/.exec(doc);
    expect(match, "the markers in docs/protocol.md").to.not.equal(null);
    const cells = (text: string) =>
      text
        .trim()
        .split("\n")
        .map((line) =>
          line
            .split("|")
            .map((c) => c.trim())
            .join("|"),
        );
    expect(
      cells(match![1]),
      "regenerate it: console.log(transitionTableMarkdown()) from operator/guarantees/transitions.ts",
    ).to.deep.equal(cells(transitionTableMarkdown()));
  });
});
