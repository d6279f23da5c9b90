/**
 * The cron trigger (wrangler.toml `[triggers]`): housekeeping that must not depend on
 * traffic. Today: purge idempotency keys past their retention (DESIGN 4.1).
 *
 * @param _controller - the scheduled event (time, cron expression).
 * @param _env - bindings (D1 `DB`) and settings.
 */
export async function runScheduled(_controller: ScheduledController, _env: Env): Promise<void> {}
