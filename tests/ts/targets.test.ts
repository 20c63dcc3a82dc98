/**
 * Targets the extension made, not ones it was handed: a restored Report panel, a hover link
 * or a command argument only names a `file:` document inside a workspace folder (or one open).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { commandTargetUri, localPath, targetProblem } from "../../extension/targets";

const links: Record<string, string> = { "/w/out": "/etc", "/home/u/w": "/w" };
const ctx = {
  folders: ["/w"],
  openDocuments: ["file:///tmp/scratch.py"],
  allowOpen: false,
  real: (file: string): string => {
    for (const [from, to] of Object.entries(links)) {
      if (file === from || file.startsWith(`${from}/`)) {
        return to + file.slice(from.length);
      }
    }
    return file;
  },
};

describe("localPath", () => {
  it("reads a file: URI, nothing else", () => {
    assert.equal(localPath("file:///w/a%20b.py"), "/w/a b.py");
    assert.equal(localPath("file://localhost/w/a.py"), "/w/a.py");
    assert.equal(localPath("file://evil.example/w/a.py"), undefined);
    assert.equal(localPath("untitled:Untitled-1"), undefined);
    assert.equal(localPath("vscode-remote://x/w/a.py"), undefined);
    assert.equal(localPath("/w/a.py"), undefined);
    assert.equal(localPath("file:///w/a%2Fb.py"), undefined);
    assert.equal(
      localPath("vscode-notebook-cell:/w/nb%20a.ipynb#W0sZmlsZQ%3D%3D"),
      "/w/nb a.ipynb",
    );
    assert.equal(localPath("vscode-notebook-cell://host/w/nb.ipynb#W0"), undefined);
  });
});

describe("targetProblem", () => {
  it("accepts a workspace file, through a link to the folder too", () => {
    assert.equal(targetProblem("file:///w/kernels/square.py", ctx), undefined);
    assert.equal(targetProblem("file:///home/u/w/square.py", ctx), undefined);
  });

  it("refuses a forged saved state: /etc/passwd, a file outside, a climb out, a link out", () => {
    assert.equal(
      targetProblem("file:///etc/passwd", ctx),
      "/etc/passwd is not in a workspace folder",
    );
    assert.match(targetProblem("file:///tmp/x.py", ctx) ?? "", /not in a workspace folder/);
    assert.match(targetProblem("file:///w/../etc/passwd", ctx) ?? "", /not in a workspace folder/);
    assert.match(targetProblem("file:///w/out/passwd", ctx) ?? "", /not in a workspace folder/);
    assert.match(targetProblem("file:///w2/a.py", ctx) ?? "", /not in a workspace folder/);
  });

  it("refuses what is not a local file or not a string", () => {
    assert.match(targetProblem("https://e.com/a.py", ctx) ?? "", /not a local file/);
    assert.match(targetProblem("command:workbench.action.openSettings", ctx) ?? "", /not a local/);
    assert.equal(targetProblem(42, ctx), "no document named");
    assert.equal(targetProblem("", ctx), "no document named");
  });

  it("accepts a cell of a workspace notebook, and an open cell of any notebook where allowed", () => {
    assert.equal(targetProblem("vscode-notebook-cell:/w/nb.ipynb#W0sZmlsZQ%3D%3D", ctx), undefined);
    assert.match(targetProblem("vscode-notebook-cell:/etc/nb.ipynb#W0", ctx) ?? "", /not in a/);
    const open = { ...ctx, allowOpen: true, openDocuments: ["vscode-notebook-cell:/t/n.ipynb#W1"] };
    assert.equal(targetProblem("vscode-notebook-cell:/t/n.ipynb#W1", open), undefined);
  });

  it("accepts a document open in the editor only where allowed, never without a folder", () => {
    assert.match(targetProblem("file:///tmp/scratch.py", ctx) ?? "", /not in a workspace/);
    assert.equal(targetProblem("file:///tmp/scratch.py", { ...ctx, allowOpen: true }), undefined);
    assert.match(
      targetProblem("file:///w/a.py", { ...ctx, folders: [] }) ?? "",
      /not in a workspace folder/,
    );
  });
});

describe("commandTargetUri", () => {
  it("is the uri of the first argument, if any", () => {
    assert.equal(commandTargetUri([{ uri: "file:///w/a.py", function: "f" }]), "file:///w/a.py");
    assert.equal(commandTargetUri([]), undefined);
    assert.equal(commandTargetUri(["file:///w/a.py"]), undefined);
    assert.equal(commandTargetUri([{ function: "f" }]), undefined);
  });
});
