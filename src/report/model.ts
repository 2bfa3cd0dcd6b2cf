/**
 * What a report shows, as plain data: built by collect.ts from Temporal and the output files,
 * turned into HTML by render.ts. Kept apart so the page can be tested without a server.
 */

/** One output video: where it came from and what ffprobe says about the copy in the report. */
export interface ReportVideo {
  /** The service's URL of the output. */
  url: string;
  /** The media-store address (`sha256:…`) of the archived copy, when that copy is the one shown. */
  archivedFrom?: string;
  fileName: string;
  contentType: string;
  bytes: number;
  durationSeconds: number;
  width: number | null;
  height: number | null;
  videoCodec: string | null;
  /** `src` of the `<video>`: a data URI (embedded) or a path relative to the page. */
  src: string;
  /** Poster frame (JPEG data URI) and the second it was taken at. */
  poster: string | null;
  posterAtSeconds: number | null;
  /** Set when the file could not be fetched or read; the player is then left out. */
  problem?: string;
}

/** Time a step spent in each phase, seconds; null when the pipeline did not record it. */
export interface StepTimings {
  /** Submitted → rendering began at the service (service time minus rendering). */
  queuedSeconds: number | null;
  /** The service's `timings.inference_seconds`. */
  renderingSeconds: number | null;
  /** Previous step's outcome known (or the pipeline's start) → this step's submit acknowledged. */
  handoffSeconds: number | null;
}

export interface ReportCredits {
  quoted: number;
  charged: number;
  refunded: number;
  net: number;
}

export interface ReportStep {
  id: string;
  model: string;
  status: string;
  requestIds: string[];
  attempts: number;
  credits: ReportCredits;
  timings: StepTimings;
  error?: string;
  videos: ReportVideo[];
  /** A graph: the steps this one waits for. */
  dependsOn?: string[];
  /** A graph: images the step made (an operation's frame). */
  images?: ReportImage[];
  /** A graph's fan-out step: one entry per item, in item order. */
  items?: ReportItem[];
  /** An approval gate: what the person was shown and how it was decided. */
  approval?: ReportApproval;
}

/** An output image (a frame taken by an operation), always embedded as a data URI. */
export interface ReportImage {
  url: string;
  archivedFrom?: string;
  fileName: string;
  contentType: string;
  bytes: number;
  width: number | null;
  height: number | null;
  /** `src` of the `<img>`: a data URI, or '' when `problem` says why there is none. */
  src: string;
  problem?: string;
}

/** One item of a fan-out step: its state and its own outputs. */
export interface ReportItem {
  index: number;
  status: string;
  requestIds: string[];
  error?: string;
  videos: ReportVideo[];
  images: ReportImage[];
}

/** An approval gate in the report. */
export interface ReportApproval {
  /** `waiting for a person`, `approved by ann`, `rejected (timed out)`, `not reached`. */
  state: string;
  /** `src`: the report's own copy of an earlier output when the preview is one, else the URL. */
  previews: Array<{ url: string; src: string; kind: 'video' | 'image' }>;
  note?: string;
  decision?: { decision: 'approve' | 'reject'; at: string; reason?: string; by?: string; timedOut?: true };
}

export interface PipelineReport {
  kind: 'pipeline';
  name: string;
  workflowId: string;
  status: string;
  budgetCredits: number | null;
  ledger: ReportCredits;
  startedAt: string | null;
  closedAt: string | null;
  error?: string;
  steps: ReportStep[];
  /** 2 for a graph: its steps in graph order, each with its dependencies, images and items. */
  version?: 2;
  /** Link to the workflow in the Temporal UI, when its address is known. */
  temporalUiUrl?: string;
  generatedAt: string;
}

/** One pipeline of a batch, as a gallery card: its last step's output. */
export interface BatchReportItem {
  name: string;
  workflowId: string;
  status: string;
  ledger: ReportCredits | null;
  error?: string;
  steps: Array<{ id: string; status: string; requestIds: string[] }>;
  finalVideo: ReportVideo | null;
  temporalUiUrl?: string;
}

export interface BatchReport {
  kind: 'batch';
  name: string;
  workflowId: string;
  status: string;
  /** While an account-level refusal pauses the batch: why, and how many items wait for `reelflow batch resume`. */
  paused?: { code: string; reason: string; waiting: number };
  totals: {
    items: number;
    byState: Record<string, number>;
    credits: ReportCredits;
    videoSeconds: number;
  };
  items: BatchReportItem[];
  generatedAt: string;
}

export type Report = PipelineReport | BatchReport;
