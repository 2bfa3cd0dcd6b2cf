/** Pipeline spec, builder, references and pacing. Pure: the workflows import it. */
export * from './errors';
export * from './references';
export * from './graph';
export * from './items';
export * from './spec';
export * from './pacing';
export * from './builder';
export * from './examples';
