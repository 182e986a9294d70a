import { Migration } from '@mikro-orm/migrations';

/**
 * Each holding of an idempotency key has its own token (`src/idempotency.ts`): a request that takes
 * a key over after its lease ended gets a new one, and the answer is kept (or the key freed) only
 * by a statement that finds the row still held with the caller's token, so a slow first holder
 * never writes over (or frees) its successor's row. Rows made before have none: their holders
 * were gone when this ran, and they are kept, replayed and taken over as before.
 */
export class Migration20261129120000_idempotencyLeaseToken extends Migration {

  override name = 'Migration20261129120000_idempotencyLeaseToken';

  override up(): void | Promise<void> {
    this.addSql(`alter table "idempotency_keys" add "lease_token" varchar(64) null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "idempotency_keys" drop column "lease_token";`);
  }

}
