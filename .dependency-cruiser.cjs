/**
 * Architecture rules (issue 13), checked by `npm run lint`:
 * no cycles; src/core is pure (only zod from outside); adapters are wired in src/services.ts alone
 * and never reach up into the HTTP or admin layers; Hono and the wiring are used only by the HTTP
 * layer and the Worker entry; service modules never import HTTP; regen never imports an adapter;
 * nothing below src/jobs imports a job (adapters implement its port);
 * every import resolves and is declared (docs/architecture.md, the layer table).
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "Import cycles make the layers meaningless and the load order fragile.",
      from: {},
      to: { circular: true },
    },
    {
      name: "core-is-pure",
      severity: "error",
      comment: "src/core: records in, bytes out. Nothing from outside src/core except zod (no Cloudflare or Hono types either).",
      from: { path: "^src/core/", pathNot: "\\.test\\.ts$" },
      to: { pathNot: ["^src/core/", "^node_modules/zod/"] },
    },
    {
      name: "config-imports-only-core",
      severity: "error",
      comment: "src/config turns env into a typed Config: it knows the core's limits and formats, nothing of the features that read it.",
      from: { path: "^src/config(/|\\.ts$)", pathNot: "\\.test\\.ts$" },
      to: { pathNot: ["^src/config(/|\\.ts$)", "^src/core/", "^node_modules/zod/"] },
    },
    {
      name: "adapters-stay-below-http",
      severity: "error",
      comment: "Adapters implement ports; they never import the HTTP app, the admin API or the Worker entry.",
      from: { path: "^src/adapters/" },
      to: { path: ["^src/http/", "^src/admin/", "^src/app\\.ts$", "^src/index\\.ts$"] },
    },
    {
      name: "adapters-wired-in-services-only",
      severity: "error",
      comment:
        "src/services.ts is the one place that turns env into adapters; everything else takes ports. " +
        "src/index.ts only re-exports Durable Object classes (the runtime needs them on the entry).",
      from: { path: "^src/", pathNot: ["^src/services\\.ts$", "^src/index\\.ts$", "^src/adapters/", "\\.test\\.ts$"] },
      to: { path: "^src/adapters/" },
    },
    {
      name: "hono-only-in-http",
      severity: "error",
      comment:
        "Requests are answered in src/http, src/admin and src/index.ts alone: nothing else takes a Hono Context or builds routes. " +
        "Hono's standalone utilities are no HTTP layer (src/notify/search-console.ts signs its JWT with hono/jwt).",
      from: { path: "^src/", pathNot: ["^src/http/", "^src/admin/", "^src/index\\.ts$", "\\.test\\.ts$"] },
      // `hono/jwt` resolves to hono's jwt middleware module, which re-exports the utility's sign/verify.
      to: { path: ["^node_modules/hono/", "^node_modules/@hono/"], pathNot: "^node_modules/hono/dist/(types/)?(middleware/jwt|utils)/" },
    },
    {
      name: "services-wiring-only-at-the-top",
      severity: "error",
      comment:
        "src/services.ts turns env into adapters; only the Worker entry and the HTTP and admin layers call it. " +
        "Scheduled jobs are handed their services by src/index.ts (the Services type is in src/services-type.ts).",
      from: { path: "^src/", pathNot: ["^src/http/", "^src/admin/", "^src/index\\.ts$", "^src/job-dispatch\\.ts$", "\\.test\\.ts$"] },
      to: { path: "^src/services\\.ts$" },
    },
    {
      name: "services-stay-below-http",
      severity: "error",
      comment:
        "Service modules (documents, regeneration, notification, mirrors, sync, housekeeping, Search Console status, ingest, snapshots) " +
        "never import the HTTP app, the admin API or the Worker entry: what they share with them lives below both " +
        "(document paths and Cache-Tag values in src/documents/, the capped body reader in src/outbound/).",
      from: {
        path: [
          "^src/(regen|notify|mirror|sync|housekeeping|gsc|formats|manifest|ingest|snapshots|documents|outbound|lastmod|crawlers|registry)/",
          "^src/sitemaps\\.ts$",
          "^src/services-type\\.ts$",
        ],
        pathNot: "\\.test\\.ts$",
      },
      to: { path: ["^src/http/", "^src/admin/", "^src/index\\.ts$", "^src/job-dispatch\\.ts$"] },
    },
    {
      name: "regen-never-touches-adapters",
      severity: "error",
      comment:
        "Regeneration works through the ports (records, manifests, snapshots, its own state) and never parses a " +
        "store's keys: the KV key helpers stay inside src/adapters/kv/ (already implied by adapters-wired-in-services-only; " +
        "named here so that the message says what went wrong).",
      from: { path: "^src/regen/", pathNot: "\\.test\\.ts$" },
      to: { path: "^src/adapters/" },
    },
    {
      name: "jobs-on-top",
      severity: "error",
      comment:
        "src/jobs/ (the queue's jobs, docs/jobs.md) calls the regeneration, mirrors, notification, Search Console status and " +
        "sync modules; nothing below imports a job. The wiring hands the scheduler out (src/services.ts, src/services-type.ts).",
      from: {
        path: [
          "^src/(core|config|store|regen|notify|mirror|sync|housekeeping|gsc|formats|manifest|ingest|snapshots|documents|outbound|robots|demo|lastmod)/",
          "^src/(sitemaps|config)\\.ts$",
        ],
        pathNot: "\\.test\\.ts$",
      },
      to: { path: "^src/jobs/" },
    },
    {
      name: "adapters-implement-the-jobs-port-only",
      severity: "error",
      comment: "An adapter implements the jobs' port (src/jobs/store.ts, naming the kinds of src/jobs/messages.ts), nothing else of src/jobs.",
      from: { path: "^src/adapters/" },
      to: { path: "^src/jobs/", pathNot: "^src/jobs/(store|messages)\\.ts$" },
    },
    {
      name: "not-to-unresolvable",
      severity: "error",
      comment: "Every import resolves (workerd's cloudflare: modules are provided at run time).",
      from: {},
      to: { couldNotResolve: true, pathNot: "^cloudflare:" },
    },
    {
      name: "not-to-undeclared",
      severity: "error",
      comment: "Every package imported is in package.json.",
      from: {},
      to: { dependencyTypes: ["npm-no-pkg", "npm-unknown"] },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: ["^worker-configuration\\.d\\.ts$", "^test/fixtures/"] },
    // Type-only imports count too: src/core must not even name Cloudflare or Hono types.
    tsPreCompilationDeps: true,
    // TypeScript 7 has no compiler API for dependency-cruiser (it supports typescript < 7): swc parses instead.
    parser: "swc",
    tsConfig: { fileName: "tsconfig.node.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".d.ts", ".js", ".mjs", ".cjs", ".json"],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
