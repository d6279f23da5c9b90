/**
 * A command line the CLI cannot run: an unknown command or option, a missing or invalid
 * value. The entry prints the message and the usage to stderr and exits with status 2.
 */
export class UsageError extends Error {
  override name = 'UsageError';
  /** The usage text of the command the arguments were meant for. */
  readonly usage: string;

  /**
   * @param message - what is wrong, naming the option (e.g. `--port must be ...`).
   * @param usage - the usage text printed after the message.
   */
  constructor(message: string, usage: string) {
    super(message);
    this.usage = usage;
  }
}
