/** Stops the import: the message is printed, the exit code returned (1 invalid input, 3 server or network). */
export class Stop extends Error {
  readonly exitCode: 1 | 3;
  constructor(exitCode: 1 | 3, message: string) {
    super(message);
    this.exitCode = exitCode;
  }
}
