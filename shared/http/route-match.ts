import type { Route } from '../routes.ts';

export interface CompiledRoute {
  route: Route;
  regex: RegExp;
  params: string[];
}

export function compile(route: Route): CompiledRoute {
  const params: string[] = [];
  const pattern = route.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{([A-Za-z_]+)\}/g, (_m, name: string) => {
    params.push(name);
    return '([^/]+)';
  });
  return { route, regex: new RegExp(`^${pattern}$`), params };
}

/** Path parameters of `path` under `c`, or undefined when it does not match. */
export function matchPath(c: CompiledRoute, path: string): Record<string, string> | undefined {
  const m = c.regex.exec(path);
  if (!m) return undefined;
  const out: Record<string, string> = {};
  c.params.forEach((p, i) => {
    out[p] = decodeSegment(m[i + 1] as string);
  });
  return out;
}

/** A path segment percent-decoded, or as sent when it is not valid percent-encoding (`%ZZ`): its handler's validation answers 400 then. */
function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
