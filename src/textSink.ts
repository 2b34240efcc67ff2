/**
 * Where a command's text goes: process.stdout and process.stderr when the CLI runs, a buffer
 * when a test runs `main` in-process. `isTTY` picks between a live progress bar and plain lines.
 */
export interface TextSink {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}
