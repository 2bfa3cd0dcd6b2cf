/**
 * The types of a resumed run (`reelflow resume`): a pipeline's input carries the steps an earlier run
 * completed. They are defined beside the pipeline's other types (./pipeline-types.ts, which uses
 * them), and named here for the CLI and the batch.
 */
export type { CarriedStep, ResumeFrom } from './pipeline-types';
