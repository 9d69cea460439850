/**
 * A search engine on 127.0.0.1 (a real HTTP server): an IndexNow endpoint (`POST /indexnow`) and a
 * ping endpoint (`GET /ping?sitemap=…`). The test decides what each answers next (500, 429, 200,
 * …) and reads back every request with the status it was given.
 */
import { type Server, createServer } from "node:http";

export interface EngineRequest {
  kind: "indexnow" | "ping";
  at: number;
  /** What the engine answered. */
  status: number;
  /** IndexNow: the submitted payload. */
  payload?: { host: string; key: string; keyLocation: string; urlList: string[] };
  /** Ping: the sitemap URL it announced. */
  sitemap?: string;
}

export class SearchEngine {
  readonly requests: EngineRequest[] = [];
  /** Status the next requests get, per endpoint. */
  answer: Record<EngineRequest["kind"], number> = { indexnow: 200, ping: 200 };
  #server: Server | undefined;
  port = 0;

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const url = new URL(req.url ?? "/", "http://engine");
        const kind = url.pathname === "/indexnow" && req.method === "POST" ? "indexnow" : url.pathname === "/ping" && req.method === "GET" ? "ping" : null;
        if (!kind) {
          res.writeHead(404).end();
          return;
        }
        const status = this.answer[kind];
        const entry: EngineRequest = { kind, at: Date.now(), status };
        if (kind === "indexnow") {
          try {
            entry.payload = JSON.parse(Buffer.concat(chunks).toString()) as EngineRequest["payload"];
          } catch {
            // recorded without a payload: the test fails on it
          }
        } else {
          entry.sitemap = url.searchParams.get("sitemap") ?? "";
        }
        this.requests.push(entry);
        const headers: Record<string, string> = { "content-type": "text/plain" };
        if (status === 429) headers["retry-after"] = "1";
        res.writeHead(status, headers).end(status < 300 ? "ok" : `engine says ${status}`);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    this.#server = server;
    const address = server.address();
    this.port = typeof address === "object" && address ? address.port : 0;
  }

  get indexNowEndpoint(): string {
    return `http://127.0.0.1:${this.port}/indexnow`;
  }

  get pingTemplate(): string {
    return `http://127.0.0.1:${this.port}/ping?sitemap={sitemap}`;
  }

  of(kind: EngineRequest["kind"]): EngineRequest[] {
    return this.requests.filter((r) => r.kind === kind);
  }

  async stop(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
