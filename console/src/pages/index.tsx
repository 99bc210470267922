import type { ComponentType } from 'react';
import type { Session } from '../api.ts';
import { Overview } from './Overview.tsx';
import { Catalog } from './Catalog.tsx';
import { Playground } from './Playground.tsx';
import { Events } from './Events.tsx';
import { Templates } from './Templates.tsx';
import { Training } from './Training.tsx';
import { Models } from './Models.tsx';
import { Endpoints } from './Endpoints.tsx';
import { Rules } from './Rules.tsx';
import { Segments } from './Segments.tsx';
import { Search } from './Search.tsx';
import { Experiments } from './Experiments.tsx';
import { RerankPage } from './Rerank.tsx';
import { Credentials } from './Credentials.tsx';
import { Audit } from './Audit.tsx';

export interface PageProps {
  session: Session;
}

export const PAGES = [
  { key: 'overview', title: 'Overview', component: Overview },
  { key: 'catalog', title: 'Catalog', component: Catalog },
  { key: 'playground', title: 'Search playground', component: Playground },
  { key: 'events', title: 'Events', component: Events },
  { key: 'templates', title: 'Templates', component: Templates },
  { key: 'training', title: 'Training runs', component: Training },
  { key: 'models', title: 'Model versions', component: Models },
  { key: 'endpoints', title: 'Serving endpoints', component: Endpoints },
  { key: 'search', title: 'Synonyms & analytics', component: Search },
  { key: 'rules', title: 'Rules', component: Rules },
  { key: 'segments', title: 'Segments', component: Segments },
  { key: 'experiments', title: 'Experiments', component: Experiments },
  { key: 'rerank', title: 'Rerank controls', component: RerankPage },
  { key: 'keys', title: 'API keys & clients', component: Credentials },
  { key: 'audit', title: 'Audit history', component: Audit },
] as const satisfies readonly { key: string; title: string; component: ComponentType<PageProps> }[];

export type PageKey = (typeof PAGES)[number]['key'];
