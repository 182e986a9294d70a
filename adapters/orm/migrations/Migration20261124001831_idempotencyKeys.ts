import { Migration } from '@mikro-orm/migrations';

/** The idempotency keys of writes (`src/idempotency.ts`), per account. Generated from the entities. */
export class Migration20261124001831_idempotencyKeys extends Migration {

  override name = 'Migration20261124001831_idempotencyKeys';

  override up(): void | Promise<void> {
    this.addSql(`create table "idempotency_keys" ("account_id" varchar(128) not null, "key" varchar(255) not null, "fingerprint" varchar(64) not null, "status" int null, "headers" jsonb null, "body" text null, "lease_until" timestamptz(3) not null, "expires_at" timestamptz(3) not null, primary key ("account_id", "key"));`);
    this.addSql(`create index "idempotency_keys_expires_at_index" on "idempotency_keys" ("expires_at");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "idempotency_keys" cascade;`);
  }

}
