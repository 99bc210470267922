import { notFoundHandler } from '#shared/http/not-found';

export const handler = notFoundHandler('platform');
