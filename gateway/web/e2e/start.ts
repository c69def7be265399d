// Starts one real Foundry, as `make run` does but on free ports and a
// scratch data directory, with an administrator key and an
// emergency-freeze signer the caller knows. global-setup.ts starts the one
// every test shares; a test that needs another setting (reads that are
// not public) starts its own.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { artifacts, foundryBinary } from "./paths";

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      srv.close(() => (addr && typeof addr === "object" ? resolve(addr.port) : reject(new Error("no port"))));
    });
  });
}

async function waitReady(base: string, exited: () => string | null, timeoutMs: number, logName: string) {
  const deadline = Date.now() + timeoutMs;
  let last = "no answer";
  while (Date.now() < deadline) {
    const gone = exited();
    if (gone) throw new Error(`foundry exited before it was ready (${gone}); see ${artifacts}/${logName}`);
    try {
      const res = await fetch(`${base}/api/ready`);
      if (res.ok) return;
      last = `status ${res.status}`;
    } catch (err) {
      last = String(err);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`foundry was not ready within ${timeoutMs} ms (${last}); see ${artifacts}/${logName}`);
}

export interface Foundry {
  /** base is its address, http://127.0.0.1:<port>. */
  base: string;
  adminKey: string;
  /** signer is the emergency-freeze signer, "<id>:<secret>". */
  signer: string;
  /** stop stops it and removes its data. */
  stop: () => Promise<void>;
}

export interface Options {
  /** logName is its log's file among the artifacts. */
  logName?: string;
  /** publicReads false makes every read need a credential (FOUNDRY_PUBLIC_READS). */
  publicReads?: boolean;
}

export async function startFoundry({ logName = "foundry.log", publicReads = true }: Options = {}): Promise<Foundry> {
  if (!existsSync(foundryBinary)) {
    throw new Error(`${foundryBinary} is missing: build it with go build -o bin/foundry ./cmd/foundry`);
  }
  mkdirSync(artifacts, { recursive: true });
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "foundry-browser-"));
  const [http, grpc, admin] = [await freePort(), await freePort(), await freePort()];
  const adminKey = randomBytes(16).toString("hex");
  const signer = { id: "ops", secret: randomBytes(16).toString("hex") };

  // Foundry reads FOUNDRY_* and RUNTIME_* settings from the environment:
  // the caller's own (a Postgres URL, the pipeline loop) must not leak in.
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith("FOUNDRY_") && !k.startsWith("RUNTIME_")) env[k] = v;
  }
  env.FOUNDRY_SIGNERS = `${signer.id}:${signer.secret}`;
  env.FOUNDRY_PUBLIC_READS = String(publicReads);
  const args = [
    `-http-addr=127.0.0.1:${http}`,
    `-grpc-addr=127.0.0.1:${grpc}`,
    `-admin-addr=127.0.0.1:${admin}`,
    `-data-dir=${dataDir}`,
    `-admin-key=${adminKey}`,
    "-rate-poll-interval=0",
    // A failed task waits an hour for its retry: the journeys' failed tasks
    // stay failed while the later ones run.
    "-agent-retry-backoff=1h",
    "-agent-retry-backoff-max=1h",
  ];
  // FOUNDRY_BROWSER_DATABASE_URL runs the same journeys on Postgres (the
  // shared Foundry only: another one on the same database would see its data).
  if (process.env.FOUNDRY_BROWSER_DATABASE_URL && logName === "foundry.log") {
    args.push(`-database-url=${process.env.FOUNDRY_BROWSER_DATABASE_URL}`);
  }

  const log = createWriteStream(path.join(artifacts, logName));
  const child = spawn(foundryBinary, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  let exit: string | null = null;
  child.on("exit", (code, sig) => (exit = `code ${code}, signal ${sig}`));

  const base = `http://127.0.0.1:${http}`;
  try {
    await waitReady(base, () => exit, 60_000, logName);
  } catch (err) {
    child.kill("SIGKILL");
    throw err;
  }

  const stop = async () => {
    if (exit === null) {
      const stopped = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await stopped;
      clearTimeout(timer);
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  return { base, adminKey, signer: `${signer.id}:${signer.secret}`, stop };
}
