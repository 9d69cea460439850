/**
 * The services of a partitioned site from its partitions' services: records and manifests across
 * all of them; the state that is the site's alone (notifications' targets, mirrors, Search Console,
 * admin sessions) in its first partition's database, the home of everything not keyed by a loc.
 */
import type { Config } from "../config.ts";
import type { Services } from "../services-type.ts";
import { PartitionedManifestStore } from "./manifest-store.ts";
import { partitionedRecordStore } from "./record-store.ts";
import type { LayoutOf } from "./served.ts";

/** `parts`: every configured partition's services, their stores already as served (served.ts). */
export function partitionedServices(config: Config, parts: readonly Services[], layoutOf: LayoutOf): Services {
  const home = parts[0]!;
  return {
    ...home,
    config,
    store: partitionedRecordStore(
      parts.map((p) => p.store),
      layoutOf,
    ),
    manifests: new PartitionedManifestStore(parts, layoutOf),
    partitions: [...parts],
  };
}
