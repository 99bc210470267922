import { blobs } from '#shared/blob';
import { nowSeconds } from '#shared/clock';
import { config } from '#shared/config';
import { exposureStore, passCursor, searchLogStore, segmentEvents, stores } from '#shared/data/index';
import { maintenancePass } from '#shared/maintenance';
import { workQueue } from '#shared/queue/messages';
import { taskLauncher } from '#shared/recs/launcher';
import * as z from 'zod/mini';

/** The schedule's event: the pass runs as of its `time` (a retried delivery decides as the first did). */
const scheduledEvent = z.object({ time: z.iso.datetime({ offset: true }) });

/** Scheduled (every minute on AWS; a timer locally): the maintenance pass, as of the event's time (the clock's without one). */
export const handler = async (event?: unknown) => {
  const asOf = z.safeParse(scheduledEvent, event);
  const now = asOf.success ? Math.floor(Date.parse(asOf.data.time) / 1000) : nowSeconds();
  const deps = {
    stores: stores(),
    blobs: blobs(),
    queue: workQueue(),
    launcher: taskLauncher(),
    searchLog: searchLogStore(),
    exposures: exposureStore(),
    segmentEvents: segmentEvents(),
    cursor: passCursor(),
    embedGraceSeconds: config().maintenance.embedGraceSeconds,
    userRefKey: config().maintenance.userRefKey,
  };
  return maintenancePass(deps, now);
};
