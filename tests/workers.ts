/**
 * Workers for the test scripts that call the library from several threads
 * at once: a web Worker under Bun and Deno, a worker_threads one under Node,
 * behind one interface on each side.
 */

export interface WorkerHandle {
  post(message: unknown): void;
  terminate(): void;
}

/** Starts the module at `url` as a Worker. */
export async function startWorker<Reply>(url: URL, onMessage: (reply: Reply) => void, onError: (message: string) => void): Promise<WorkerHandle> {
  if (typeof Worker === "undefined") {
    const w = new (await import("node:worker_threads")).Worker(url);
    w.on("message", onMessage);
    w.on("error", (e: Error) => onError(e.message));
    return { post: (m: unknown) => w.postMessage(m), terminate: () => void w.terminate() };
  }
  const w = new Worker(url.href, { type: "module" });
  w.onmessage = (e: MessageEvent<Reply>) => onMessage(e.data);
  w.onerror = (e) => onError(e.message);
  return { post: (m: unknown) => w.postMessage(m), terminate: () => w.terminate() };
}

export interface ParentPort<Task> {
  postMessage(message: unknown): void;
  on(event: "message", f: (task: Task) => void): void;
}

/** Inside a Worker: the channel to the thread that started it (its global scope on the web, parentPort under Node). */
export async function parentPort<Task>(): Promise<ParentPort<Task>> {
  const web = globalThis as unknown as { postMessage?: (message: unknown) => void };
  if (typeof web.postMessage === "function") {
    return {
      postMessage: (m) => web.postMessage!(m),
      on: (_, f) => ((globalThis as unknown as { onmessage: (e: MessageEvent<Task>) => void }).onmessage = (e) => f(e.data)),
    };
  }
  return (await import("node:worker_threads")).parentPort! as unknown as ParentPort<Task>;
}
