export type { Registry } from 'prom-client';
export * from './definitions';
export * from './server';
