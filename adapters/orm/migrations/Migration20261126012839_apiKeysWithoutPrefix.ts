import { Migration } from '@mikro-orm/migrations';

/**
 * API keys keep only their hash (the contract: "only a hash is stored"): the first characters of
 * each key, kept so far to tell keys apart on `/connect`, are dropped with their column; the page
 * shows the key's id instead (what `admin key revoke` takes). Generated from the entities (the
 * generated `down` also rebuilt the partitioned activity table, a false diff; dropped by hand).
 * `down` cannot bring the dropped characters back: it restores the column empty.
 */
export class Migration20261126012839_apiKeysWithoutPrefix extends Migration {

  override name = 'Migration20261126012839_apiKeysWithoutPrefix';

  override up(): void | Promise<void> {
    this.addSql(`alter table "api_keys" drop column "prefix";`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "api_keys" add "prefix" varchar(32) not null default '';`);
  }

}
