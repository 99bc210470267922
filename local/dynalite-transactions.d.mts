import type { Server } from 'node:http';

export function answerTransactions(server: Server): void;
