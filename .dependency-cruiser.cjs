/**
 * Architecture rules (issue 13), checked by `npm run lint`:
 * no cycles; src/core is pure (only zod from outside); adapters are wired in src/services.ts alone
 * and never reach up into the HTTP or admin layers; every import resolves and is declared.
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
