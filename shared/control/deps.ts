import { consoleStore, eventStore } from '../data/index.ts';
import type { ConsoleStore } from '../domain/console-records.ts';
import type { EventStore } from '../domain/types.ts';
import { erasedUser } from '../recs/served-model.ts';
import type { ControlDeps } from './serving.ts';

/** The control plane as the serving functions read it, over the container's table. */
export const controlDeps = (): ControlDeps => controlDepsOf({ console: consoleStore(), events: eventStore() });

/** The control plane as serving reads it, over these stores (the demo seed's, on its own table). */
export function controlDepsOf(s: { console: ConsoleStore; events: EventStore }): ControlDeps {
  return {
    config: (tenant) => s.console.controlConfig(tenant),
    contextExists: async (tenant, id) => (await s.console.get(tenant, 'context', id)) !== undefined,
    userEvents: (tenant, userId, limit, below, pages) => s.events.recentByUserWithin(tenant, userId, limit, below, pages),
    // The read recommendations make (the marker's key, shared by a container's concurrent requests).
    erasedUser: (tenant, userId) => erasedUser(s.console, tenant, userId),
  };
}
