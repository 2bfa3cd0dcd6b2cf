export * from './registry';
export * from './definitions';
export * from './server';
