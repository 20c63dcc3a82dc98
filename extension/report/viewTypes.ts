/**
 * The report's names in package.json: the custom editors' view types and the panel's type.
 * Pure, so the manifest test checks them.
 */

/** `contributes.customEditors[].viewType`, and which server request reads each file. */
export const VIEW_TYPES = {
  /** `*.pt.trace.json(.gz)` (PyTorch's profiler traces): opened in the timeline by default. */
  traceTimeline: "kernelLens.traceTimeline",
  /** Any `*.json(.gz)`: the timeline is offered in "Reopen Editor With…" only. */
  jsonTimeline: "kernelLens.jsonTimeline",
  /** `*.ncu-rep`: Nsight Compute reports. */
  ncuReport: "kernelLens.ncuReport",
} as const;

/** `createWebviewPanel`'s view type of the report panel. */
export const REPORT_PANEL_TYPE = "kernelLens.report";
