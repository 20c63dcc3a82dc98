/**
 * `scripts/try.sh`: code-server with dist/kernel-lens.vsix on a trusted copy of kernels/, on
 * 127.0.0.1, in the foreground until Ctrl-C (then code-server is stopped and the copy removed).
 *
 * Environment: KERNEL_LENS_TRY_PORT (default: a free port), KERNEL_LENS_E2E_PYTHON.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import * as codeServer from "./codeserver.mjs";

const base = await mkdtemp(path.join(os.tmpdir(), "kernel-lens-try-"));
const dirs = await codeServer.prepare(base, { trusted: true, forTest: false });
console.log(codeServer.installExtension(dirs).split("\n").pop());
const port = process.env.KERNEL_LENS_TRY_PORT
  ? Number(process.env.KERNEL_LENS_TRY_PORT)
  : undefined;
const server = await codeServer.start(dirs, { port, logFile: path.join(base, "code-server.log") });

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  console.log("\nstopping code-server …");
  await server.stop();
  await rm(base, { recursive: true, force: true });
  process.exit(0);
}
process.on("SIGINT", stop);
process.on("SIGTERM", stop);

console.log(`
Kernel Lens in code-server (pid ${server.pid}):

    ${server.url}

workspace  ${dirs.workspace}   (a copy of kernels/, trusted; edit freely)
python     ${codeServer.PYTHON}
log        ${path.join(base, "code-server.log")}

Open square.py and click "Profile" above a function; matmul_relu.pt.trace.json and
triton_fused_full.ncu-rep (recorded on an H200) open in Kernel Lens's viewers. Ctrl-C stops it.
From another machine: ssh -L ${server.port}:127.0.0.1:${server.port} <this host>, then open the URL.`);
await new Promise(() => {});
