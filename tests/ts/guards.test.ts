/**
 * The run-time checks of the protocol (the combinators of `guards.ts`, the checks generated with
 * the types in `generated/wire.ts`): what they accept and the reasons they give, that every
 * `kernelLens/*` request's method object carries the check of its result, and those checks run
 * on the server's recorded answers: tests/data/protocol/ (one per custom request, recorded from
 * a real server run by the Python tests) and the older recordings in tests/data/report, cpu, h200.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import {
  checkCommandResult,
  checkFunctionsResult,
  checkInlineResult,
  checkNcuFileResult,
  checkProfile,
  checkReportResult,
  checkTimeline,
  RESULT_CHECKS,
  type InlineResult,
} from "../../extension/generated/wire";
import {
  check,
  int,
  Invalid,
  is,
  listOf,
  nullable,
  oneOf,
  optional,
  recordOf,
  shape,
  string,
  type Check,
} from "../../extension/guards";
import { commandFailure, REQUESTS } from "../../extension/protocol";

const ROOT = path.resolve(__dirname, "..", "..");
const PROTOCOL_DATA = path.join(ROOT, "tests", "data", "protocol");
const readJson = (...parts: string[]): unknown =>
  JSON.parse(readFileSync(path.join(ROOT, ...parts), "utf8"));

/** The value, or fails the test with the check's reason. */
function valid<T>(c: Check<T>, value: unknown, what: string): T {
  const checked = check(c, value, what);
  assert.ok(!(checked instanceof Invalid), checked instanceof Invalid ? checked.reason : "");
  return checked;
}

/** The reason a check gives for `value`, or fails the test if it accepts it. */
function reason<T>(c: Check<T>, value: unknown): string {
  const checked = check(c, value, "result");
  assert.ok(checked instanceof Invalid, `accepted ${JSON.stringify(value)}`);
  return checked.reason;
}

/** A recorded kernelLens/inlineExtension answer (`kernels/inline_square.py`), fresh each call. */
const inlineAnswer = (): InlineResult =>
  readJson("tests", "data", "cpu", "inline_square_inline.json") as InlineResult;

/** The answer with its first module changed by `change`. */
function withModule(change: (module: Record<string, unknown>) => void): unknown {
  const answer = inlineAnswer();
  const module = answer.modules[0];
  assert.ok(module !== undefined);
  change(module as unknown as Record<string, unknown>);
  return answer;
}

describe("checks", () => {
  it("return the value itself, with the fields they do not name passing through", () => {
    const answer = { ...inlineAnswer(), extra: { kept: true } };
    assert.equal(check(checkInlineResult, answer), answer);
  });

  it("say where and why a value is not of the type", () => {
    assert.equal(
      reason(
        checkInlineResult,
        withModule((m) => {
          (m["line_map"] as { asm_lines: unknown[] }[])[1]?.asm_lines.splice(1, 1, "61");
        }),
      ),
      'result.modules[0].line_map[1].asm_lines[1]: expected an integer, got "61"',
    );
    assert.equal(
      reason(
        checkInlineResult,
        withModule((m) => delete m["arch"]),
      ),
      "result.modules[0].arch: expected a string, got nothing",
    );
    assert.equal(
      reason(
        checkInlineResult,
        withModule((m) => (m["ptx_seconds"] = "1.5")),
      ),
      'result.modules[0].ptx_seconds: expected a number, got "1.5"',
    );
    assert.equal(reason(checkInlineResult, []), "result: expected an object, got []");
    assert.match(
      reason(string, "x".repeat(100).split("")),
      /^result: expected a string, got .{40}…$/,
    );
  });

  it("compose: optional is absent or the type, nullable is null or the type", () => {
    const c = shape<{ a?: number; b: string | null; k: "x" | "y"; m: Record<string, number> }>({
      a: optional(int),
      b: nullable(string),
      k: oneOf("x", "y"),
      m: recordOf(int),
    });
    assert.equal(is(c)({ b: null, k: "x", m: {} }), true);
    assert.equal(is(c)({ a: 1, b: "s", k: "y", m: { BLOCK: 1024 } }), true);
    assert.equal(
      reason(c, { a: null, b: null, k: "x", m: {} }),
      "result.a: expected an integer, got null",
    );
    assert.equal(reason(c, { b: 1, k: "x", m: {} }), "result.b: expected a string, got 1");
    assert.equal(reason(c, { b: null, k: "z", m: {} }), 'result.k: expected "x" or "y", got "z"');
    assert.equal(
      reason(c, { b: null, k: "x", m: { BLOCK: 1.5 } }),
      "result.m.BLOCK: expected an integer, got 1.5",
    );
    assert.equal(reason(listOf(int), [1, 2.5]), "result[1]: expected an integer, got 2.5");
  });

  it("read server command results and their failures", () => {
    assert.deepEqual(valid(checkCommandResult, { ok: true, function: "square", timing: {} }, "r"), {
      ok: true,
      function: "square",
      timing: {},
    });
    assert.equal(commandFailure({ ok: true, function: "square" }), undefined);
    assert.equal(
      commandFailure({ ok: false, error: { kind: "runtime", message: "CUDA OOM" } }),
      "CUDA OOM",
    );
    assert.equal(commandFailure({ ok: false, message: "no such parameter" }), "no such parameter");
    assert.equal(commandFailure({ ok: false }), "the command failed; see the output");
  });
});

/** The check of a request's result by its method's name (undefined: no such request). */
function resultCheck(method: string): Check<unknown> | undefined {
  return (RESULT_CHECKS as Readonly<Record<string, Check<unknown>>>)[method];
}

describe("RESULT_CHECKS", () => {
  it("has a method object in protocol.ts for every generated request, carrying its check", () => {
    assert.ok(REQUESTS.length >= 8, `found ${REQUESTS.length} requests in protocol.ts`);
    assert.deepEqual(REQUESTS.map((r) => r.method).sort(), Object.keys(RESULT_CHECKS).sort());
    for (const request of REQUESTS) {
      assert.equal(request.check, resultCheck(request.method), request.method);
    }
  });
});

/**
 * The recorded answers of tests/data/protocol/: `kernelLens_report.json` is the answer to
 * `kernelLens/report` (a file may also hold `{method?, params?, result}`: its `result` is checked).
 */
function recordedAnswers(): { file: string; method: string; result: unknown }[] {
  if (!existsSync(PROTOCOL_DATA)) {
    return [];
  }
  return readdirSync(PROTOCOL_DATA)
    .filter((name) => name.endsWith(".json"))
    .sort()
    .map((file) => {
      const data = readJson("tests", "data", "protocol", file);
      const wrapped =
        typeof data === "object" &&
        data !== null &&
        "result" in data &&
        ("params" in data || "method" in data);
      return {
        file,
        method: file.replace(/\.json$/, "").replace("_", "/"),
        result: wrapped ? (data as { result: unknown }).result : data,
      };
    });
}

describe("recorded answers (tests/data/protocol)", () => {
  const answers = recordedAnswers();
  const missing = Object.keys(RESULT_CHECKS).filter((m) => !answers.some((a) => a.method === m));
  it("are answers to kernelLens/* requests", () => {
    for (const answer of answers) {
      assert.ok(answer.method in RESULT_CHECKS, `${answer.file}: no request ${answer.method}`);
    }
  });
  it(
    "hold one answer per kernelLens/* request",
    { skip: missing.length > 0 ? `no recorded answer yet for ${missing.join(", ")}` : false },
    () => {
      assert.deepEqual(answers.map((a) => a.method).sort(), Object.keys(RESULT_CHECKS).sort());
    },
  );
  for (const answer of answers) {
    it(`${answer.file} is a ${answer.method} result`, () => {
      const c = resultCheck(answer.method);
      assert.ok(c !== undefined, `no check for ${answer.method}`);
      valid(c, answer.result, answer.method);
    });
  }
});

describe("recorded answers (tests/data/report, cpu, h200)", () => {
  it("report/matmul_relu_timeline.json is a timeline", () => {
    valid(checkTimeline, readJson("tests", "data", "report", "matmul_relu_timeline.json"), "t");
  });

  it("report/triton_fused_ncu.json is a kernelLens/ncuFile result", () => {
    valid(checkNcuFileResult, readJson("tests", "data", "report", "triton_fused_ncu.json"), "n");
  });

  for (const name of ["square_three_ways_profile.json", "triton_square_profile.json"]) {
    it(`h200/${name} is a profile, and the profile of a report`, () => {
      const profile = valid(checkProfile, readJson("tests", "data", "h200", name), name);
      valid(
        checkReportResult,
        {
          function: profile.function,
          uri: "file:///k.py",
          int_parameters: {},
          profile,
          timeline: null,
          ncu: null,
          sweep: null,
        },
        name,
      );
    });
  }

  for (const name of ["inline_square_inline.json", "inline_broken_inline.json"]) {
    it(`cpu/${name} is a kernelLens/inlineExtension result`, () => {
      valid(checkInlineResult, readJson("tests", "data", "cpu", name), name);
    });
  }

  it("a kernelLens/functions result names kinds from a closed set", () => {
    const functions = [
      { name: "square_kernel", line: 4, kind: "triton_kernel" },
      { name: "Model.forward", line: 20, kind: "method" },
      { name: "square", line: 30, kind: "function" },
    ];
    valid(checkFunctionsResult, { functions }, "f");
    assert.equal(
      reason(checkFunctionsResult, { functions: [{ name: "k", line: 1, kind: "kernel" }] }),
      'result.functions[0].kind: expected "function" or "method" or "triton_kernel", got "kernel"',
    );
  });
});
