/**
 * What the at-cursor commands send (`cursor.ts`): the cursor as `{uri, position}` for the server
 * to resolve, or the name a lens or view gave.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  assemblyParams,
  cursorParams,
  cursorPosition,
  functionParams,
  isUserReady,
  pointerLabel,
} from "../../extension/cursor";

/** Like a `vscode.Position`: line and character, and methods and state the wire must not get. */
const EDITOR_POSITION = {
  line: 11,
  character: 4,
  _line: 11,
  isBefore: () => false,
  translate: () => EDITOR_POSITION,
};

const URI = "file:///work/kernels/triton%20square.py";

describe("cursorParams", () => {
  it("sends the uri and the 0-based line and character, nothing else", () => {
    const params = cursorParams(URI, EDITOR_POSITION);
    assert.deepEqual(params, { uri: URI, position: { line: 11, character: 4 } });
    assert.deepEqual(Object.keys(params.position), ["line", "character"]);
    assert.equal(JSON.stringify(params), `{"uri":"${URI}","position":{"line":11,"character":4}}`);
  });

  it("copies the position (a later move of the cursor does not change what was sent)", () => {
    const cursor = { line: 3, character: 0 };
    const position = cursorPosition(cursor);
    cursor.line = 9;
    assert.deepEqual(position, { line: 3, character: 0 });
  });
});

describe("functionParams", () => {
  it("names the function when a lens or view gave its name", () => {
    assert.deepEqual(functionParams(URI, { name: "Model.forward" }), {
      uri: URI,
      function: "Model.forward",
    });
  });

  it("sends the cursor, without a name, for the server to resolve", () => {
    const params = functionParams(URI, { position: { line: 0, character: 7 } });
    assert.deepEqual(params, { uri: URI, position: { line: 0, character: 7 } });
    assert.equal("function" in params, false);
  });
});

describe("assemblyParams", () => {
  it("names the kernel, or sends the cursor, with the stage", () => {
    assert.deepEqual(assemblyParams(URI, { name: "square_kernel" }, "ptx"), {
      uri: URI,
      kernel: "square_kernel",
      stage: "ptx",
    });
    assert.deepEqual(assemblyParams(URI, { position: { line: 22, character: 1 } }, "sass"), {
      uri: URI,
      position: { line: 22, character: 1 },
      stage: "sass",
    });
  });
});

describe("pointerLabel", () => {
  it("is the name, else what is at the cursor's 1-based line", () => {
    assert.equal(pointerLabel({ name: "square" }, "function"), "square");
    assert.equal(
      pointerLabel({ position: { line: 22, character: 1 } }, "kernel"),
      "the kernel at line 23",
    );
  });
});

describe("isUserReady", () => {
  it("takes the server's sentences for the user, as the server words them", () => {
    assert.equal(
      isUserReady("Kernel Lens: put the cursor in a @triton.jit kernel (line 12 is not in one)."),
      true,
    );
    assert.equal(isUserReady("Kernel Lens: fix the syntax error first (line 3)."), true);
  });

  it("leaves other failures to the error path (with Show Output)", () => {
    assert.equal(isUserReady("compile: CompilationError at 4:8 (line 12)"), false);
    assert.equal(
      isUserReady("Kernel Lens runs your code to compile it: trust this workspace first."),
      false,
    );
  });
});
