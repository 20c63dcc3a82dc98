import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import {
  SetTrustedNotification,
  ServerCommands,
  StatusNotification,
  isStatusParams,
} from "../../extension/protocol";

const ROOT = path.resolve(__dirname, "..", "..");
const PYTHON_PROTOCOL = path.join(ROOT, "server", "kernel_lens", "lsp", "protocol.py");

const NAMES = [
  StatusNotification.method,
  SetTrustedNotification.method,
  ServerCommands.profile,
  ServerCommands.profileAll,
];

describe("protocol", () => {
  it("uses the agreed method names and command ids", () => {
    assert.deepEqual(NAMES, [
      "kernelLens/status",
      "kernelLens/setTrusted",
      "kernelLens.profile",
      "kernelLens.profileAll",
    ]);
  });

  it(
    "is mirrored by server/kernel_lens/lsp/protocol.py",
    { skip: existsSync(PYTHON_PROTOCOL) ? false : "protocol.py does not exist yet" },
    () => {
      const python = readFileSync(PYTHON_PROTOCOL, "utf8");
      for (const name of NAMES) {
        assert.ok(python.includes(`"${name}"`), `${name} is missing from protocol.py`);
      }
    },
  );

  it("accepts well-formed status params only", () => {
    assert.equal(isStatusParams({ state: "idle", message: "" }), true);
    assert.equal(
      isStatusParams({ state: "profiling", message: "square", uri: "file:///a.py" }),
      true,
    );
    assert.equal(isStatusParams({ state: "idle", message: "", uri: null }), true);
    assert.equal(isStatusParams({ state: "busy", message: "" }), false);
    assert.equal(isStatusParams({ state: "error" }), false);
    assert.equal(isStatusParams({ state: "error", message: "x", uri: 3 }), false);
    assert.equal(isStatusParams(null), false);
    assert.equal(isStatusParams("idle"), false);
  });
});
