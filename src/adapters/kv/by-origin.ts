/** Splitting a batch by site: each site's part goes to that site's writer object. */

export function originOf(loc: string): string | null {
  try {
    return new URL(loc).origin;
  } catch {
    return null;
  }
}

export function groupBy<T>(items: readonly T[], originOfItem: (item: T) => string | null): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const origin = originOfItem(item);
    if (origin === null) continue;
    const list = groups.get(origin) ?? [];
    list.push(item);
    groups.set(origin, list);
  }
  return groups;
}
