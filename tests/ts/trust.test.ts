/**
 * Restricted Mode: which interpreter the server may start with, and what counts as inside a
 * workspace folder (as written, through links, through `PATH`).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  heldMessage,
  insideWorkspace,
  isWithin,
  locate,
  serverInterpreter,
  type PathHost,
} from "../../extension/trust";

/** A file system of `files`, with `links` (a path → its real path, folders included). */
function host(files: string[], links: Record<string, string> = {}, pathEnv = "/usr/bin"): PathHost {
  const real = (file: string): string => {
    for (const [from, to] of Object.entries(links)) {
      if (file === from || file.startsWith(`${from}/`)) {
        return to + file.slice(from.length);
      }
    }
    return file;
  };
  return {
    real,
    exists: (file) => files.includes(file),
    pathEnv,
    cwd: "/home/u",
    platform: "linux",
  };
}

describe("isWithin", () => {
  it("is the folder or below it, not a sibling with the same prefix", () => {
    assert.equal(isWithin("/w", "/w"), true);
    assert.equal(isWithin("/w/.venv/bin/python", "/w"), true);
    assert.equal(isWithin("/w2/bin/python", "/w"), false);
    assert.equal(isWithin("/usr/bin/python3", "/w"), false);
    assert.equal(isWithin("/w/..x/python", "/w"), true);
  });
});

describe("insideWorkspace", () => {
  it("sees a workspace path as written, through a link to it, and into a linked folder", () => {
    const h = host([], { "/home/u/proj": "/data/proj", "/opt/py": "/data/proj/.venv" });
    assert.equal(insideWorkspace("/home/u/proj/.venv/bin/python", ["/home/u/proj"], h), true);
    assert.equal(insideWorkspace("/data/proj/.venv/bin/python", ["/home/u/proj"], h), true);
    assert.equal(insideWorkspace("/opt/py/bin/python", ["/home/u/proj"], h), true);
    assert.equal(insideWorkspace("relative/python", ["/home/u"], h), true);
  });

  it("counts a venv's python inside even though it links to a base interpreter outside", () => {
    const h = host([], { "/w/.venv/bin/python": "/usr/bin/python3.11" });
    assert.equal(insideWorkspace("/w/.venv/bin/python", ["/w"], h), true);
  });

  it("leaves interpreters outside every folder outside", () => {
    const h = host([], { "/usr/bin/python3": "/usr/bin/python3.11" });
    assert.equal(insideWorkspace("/usr/bin/python3", ["/w", "/x"], h), false);
    assert.equal(insideWorkspace("/usr/bin/python3", [], h), false);
  });
});

describe("locate", () => {
  it("finds a command on PATH as the system would, relative entries against cwd", () => {
    const h = host(["/home/u/bin/python3", "/usr/bin/python3"], {}, "bin:/usr/bin");
    assert.equal(locate("python3", h), "/home/u/bin/python3");
    assert.equal(locate("python3", { ...h, pathEnv: "/usr/bin" }), "/usr/bin/python3");
    assert.equal(locate("python3", { ...h, pathEnv: "/nowhere" }), undefined);
    assert.equal(locate("./py", h), "/home/u/py");
    assert.equal(locate("/opt/py", h), "/opt/py");
  });
});

describe("serverInterpreter", () => {
  const files = ["/w/.venv/bin/python", "/usr/bin/python3", "/opt/conda/bin/python"];
  const base = {
    trusted: false,
    wanted: "/w/.venv/bin/python",
    pythonExtension: undefined,
    fallback: "python3",
    folders: ["/w"],
    host: host(files),
  };

  it("runs what is asked for in a trusted workspace, wherever it is", () => {
    assert.deepEqual(serverInterpreter({ ...base, trusted: true }), {
      python: "/w/.venv/bin/python",
    });
  });

  it("runs an interpreter outside the workspace in Restricted Mode", () => {
    assert.deepEqual(serverInterpreter({ ...base, wanted: "/opt/conda/bin/python" }), {
      python: "/opt/conda/bin/python",
    });
    assert.deepEqual(serverInterpreter({ ...base, wanted: "python3" }), { python: "python3" });
  });

  it("holds a workspace interpreter back and falls back to python3 from PATH", () => {
    assert.deepEqual(serverInterpreter(base), {
      python: "/usr/bin/python3",
      held: heldMessage("/w/.venv/bin/python"),
    });
    assert.equal(
      heldMessage("/w/.venv/bin/python"),
      "Restricted Mode: /w/.venv/bin/python is in the workspace; it runs once the folder is trusted",
    );
  });

  it("prefers the Python extension's interpreter when it is outside the workspace", () => {
    assert.equal(
      serverInterpreter({ ...base, pythonExtension: "/opt/conda/bin/python" }).python,
      "/opt/conda/bin/python",
    );
    assert.equal(
      serverInterpreter({ ...base, pythonExtension: "/w/.venv/bin/python" }).python,
      "/usr/bin/python3",
    );
  });

  it("holds a workspace interpreter reached through a link or a relative path", () => {
    const linked = { ...base, host: host(files, { "/home/u/link": "/w" }) };
    assert.equal(
      serverInterpreter({ ...linked, wanted: "/home/u/link/.venv/bin/python" }).held,
      heldMessage("/home/u/link/.venv/bin/python"),
    );
    const relative = { ...base, host: { ...host(files), cwd: "/w" } };
    assert.equal(
      serverInterpreter({ ...relative, wanted: ".venv/bin/python" }).python,
      "/usr/bin/python3",
    );
  });

  it("starts nothing when python3 on PATH is itself inside the workspace", () => {
    const h = host(["/w/bin/python3", "/w/.venv/bin/python"], {}, "/w/bin:/usr/bin");
    assert.deepEqual(serverInterpreter({ ...base, host: h }), {
      python: undefined,
      held: heldMessage("/w/.venv/bin/python"),
    });
    // The bare default found first in the workspace is held back the same way.
    assert.deepEqual(serverInterpreter({ ...base, wanted: "python3", host: h }), {
      python: undefined,
      held: heldMessage("python3"),
    });
  });
});
