/**
 * docs/monitoring.md's alert rules against Core's `/metrics`: every metric name a rule's `expr` uses is one
 * Core serves (a `# TYPE` line, samples or not), so a renamed gauge cannot leave an alert silently empty.
 * Each rule also carries the fields an operator needs (alert, expr, severity, summary).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { startTestCore, type TestCore } from "./helpers";
import { OPERATOR_KEY } from "./indexer-fixtures";

const DOC = join(__dirname, "..", "..", "docs", "monitoring.md");

/** The YAML block of the alert rules (the one that holds `groups:`). */
function alertRulesBlock(markdown: string): string {
  const blocks = [...markdown.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]);
  const rules = blocks.filter((b) => /^groups:/m.test(b));
  expect(rules, "one ```yaml block with the alert rules").to.have.length(1);
  return rules[0];
}

/** Each rule: its lines from `- alert:` to the next. */
function rulesOf(block: string): { alert: string; text: string; expr: string }[] {
  return block
    .split(/\n(?=\s*- alert:)/)
    .filter((part) => /- alert:/.test(part))
    .map((text) => ({
      alert: /- alert:\s*(\S+)/.exec(text)![1],
      text,
      expr: /\bexpr:\s*(.+)/.exec(text)?.[1] ?? "",
    }));
}

/** Metric names Core declares: `# TYPE name kind` (histograms also answer to _bucket, _sum, _count). */
function servedNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, kind] of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name);
    if (kind === "histogram" || kind === "summary") {
      for (const suffix of ["_bucket", "_sum", "_count"]) names.add(name + suffix);
    }
  }
  return names;
}

describe("docs/monitoring.md alert rules", function () {
  let t: TestCore | undefined;
  after(async () => {
    await t?.stop();
  });

  it("use only metrics Core's /metrics serves, and each rule says its severity and summary", async function () {
    const rules = rulesOf(alertRulesBlock(readFileSync(DOC, "utf8")));
    expect(rules.length).to.be.at.least(10);
    // An operator key: the operator-transaction gauges are registered only with one.
    t = await startTestCore({ backgroundTasks: false, operatorPrivateKey: OPERATOR_KEY });
    const response = await fetch(`${t.core.url}/metrics`);
    expect(response.status).to.equal(200);
    const served = servedNames(await response.text());
    const used = new Set<string>();
    for (const rule of rules) {
      expect(rule.expr, `${rule.alert}: expr`).to.not.equal("");
      expect(rule.text, `${rule.alert}: severity`).to.match(/severity:\s*(warning|critical)/);
      expect(rule.text, `${rule.alert}: summary`).to.match(/summary:\s*"/);
      const names = [...rule.expr.matchAll(/\b(surety_[a-z0-9_]+)\b/g)].map((m) => m[1]);
      expect(names, `${rule.alert}: names a Surety metric`).to.not.be.empty;
      for (const name of names) used.add(name);
    }
    const missing = [...used].filter((name) => !served.has(name));
    expect(missing, "metrics the rules use that Core does not serve").to.deep.equal([]);
    // Every health figure has a rule.
    for (const name of [
      "surety_webhook_backlog_oldest_seconds",
      "surety_clearing_cutoff_lateness_seconds",
      "surety_clearing_commit_slack_seconds",
      "surety_keeper_cover_slack_seconds",
      "surety_commit_bond_margin_ratio",
      "surety_indexer_lag_blocks",
      "surety_health_warnings",
    ]) {
      expect(used, name).to.include(name);
    }
  });
});
