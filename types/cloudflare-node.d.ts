// Cloudflare types for Node-side code (scripts, benchmarks, tests that drive the Worker from
// outside). They come from the module form of @cloudflare/workers-types, so they don't clash with
// Node's own globals the way the global runtime declarations would.
type CF = typeof import("@cloudflare/workers-types/index.ts");

declare global {
  type D1Database = import("@cloudflare/workers-types/index.ts").D1Database;
  type D1PreparedStatement = import("@cloudflare/workers-types/index.ts").D1PreparedStatement;
  type D1Result<T = unknown> = import("@cloudflare/workers-types/index.ts").D1Result<T>;
  type KVNamespace<K extends string = string> = import("@cloudflare/workers-types/index.ts").KVNamespace<K>;
  type KVNamespaceListResult<M, K extends string = string> = import("@cloudflare/workers-types/index.ts").KVNamespaceListResult<M, K>;
  type ExecutionContext = import("@cloudflare/workers-types/index.ts").ExecutionContext;
  type ScheduledController = import("@cloudflare/workers-types/index.ts").ScheduledController;
  type IncomingRequestCfProperties = import("@cloudflare/workers-types/index.ts").IncomingRequestCfProperties;
  type ExportedHandler<E = unknown> = import("@cloudflare/workers-types/index.ts").ExportedHandler<E>;
  type ReadableWritablePair<R = unknown, W = unknown> = { readable: ReadableStream<R>; writable: WritableStream<W> };
  /** The Worker's bindings as the Node side sees them (vars are strings). */
  interface Env {
    DB: D1Database;
    SNAPSHOTS: KVNamespace;
    URLS: KVNamespace;
    [name: string]: unknown;
  }
  /** workerd extension (constant-time compare), used by the admin auth. */
  interface SubtleCrypto {
    timingSafeEqual(a: ArrayBuffer | ArrayBufferView, b: ArrayBuffer | ArrayBufferView): boolean;
  }
  interface ResponseInit {
    encodeBody?: "automatic" | "manual";
  }
}

export type { CF };
