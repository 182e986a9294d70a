import { Migration } from '@mikro-orm/migrations';

/**
 * The rewrite job's ledger: one row per applied line, keyed by its rewrite_id, so that running a
 * batch again applies nothing twice. Generated from the entities.
 */
export class Migration20261123235216_appliedRewrites extends Migration {

  override name = 'Migration20261123235216_appliedRewrites';

  override up(): void | Promise<void> {
    this.addSql(`create table "applied_rewrites" ("rewrite_id" varchar(200) not null, "account_id" varchar(128) not null, "article_id" varchar(128) not null, "revision" int null, "applied_at" timestamptz(3) not null, primary key ("rewrite_id"));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "applied_rewrites" cascade;`);
  }

}
