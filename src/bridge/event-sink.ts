/** Where the bridge hands a verified event: the interface lives in src/contract, shared with src/routing's inbox. */
export type { EventSink } from '../contract';
