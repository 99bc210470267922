// Worker threads do not inherit the TypeScript loader: register tsx, then load the real entry.
import { register } from 'tsx/esm/api';

register();
await import('./worker-thread.ts');
