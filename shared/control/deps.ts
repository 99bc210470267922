import { consoleStore, eventStore } from '../data/index.ts';
import type { ControlDeps } from './serving.ts';

/** The control plane as the serving functions read it, over the container's table. */
export function controlDeps(): ControlDeps {
  const c = consoleStore();
  return {
    config: (tenant) => c.controlConfig(tenant),
    contextExists: async (tenant, id) => (await c.get(tenant, 'context', id)) !== undefined,
    userEvents: (tenant, userId, limit) => eventStore().recentByUser(tenant, userId, limit),
  };
}
