import { Migration } from '@mikro-orm/migrations';

/**
 * `article_counts`: articles per account, site, status and UTC day of publication (`''` when
 * unpublished), kept by three statement triggers on `articles` (transition tables; one ordered
 * upsert of the differences per statement, nothing written when an edit changes neither status nor
 * publication day), filled from the rows already there. An article list's `total` is read from it.
 */
export class Migration20261124010000_articleCounts extends Migration {

  override name = 'Migration20261124010000_articleCounts';

  override up(): void | Promise<void> {
    this.addSql(`create table "article_counts" ("account_id" varchar(128) not null, "site_id" varchar(128) not null, "status" varchar(16) not null, "day" varchar(10) not null, "n" bigint not null, primary key ("account_id", "site_id", "status", "day"));`);
    const fn = (name: string, rows: string) => `create or replace function "articles_${name}_fn"() returns trigger as \$\$ begin
  insert into article_counts (account_id, site_id, status, day, n)
    select account_id, site_id, status, day, sum(d) from (${rows}) x
    group by 1, 2, 3, 4 having sum(d) <> 0 order by 1, 2, 3, 4
    on conflict (account_id, site_id, status, day) do update set n = article_counts.n + excluded.n;
  return null;
end; \$\$ language plpgsql;`;
    const plus = `select account_id, site_id, status, coalesce(to_char(published_at at time zone 'UTC', 'YYYY-MM-DD'), '') as day, 1 as d from new_rows`;
    const minus = `select account_id, site_id, status, coalesce(to_char(published_at at time zone 'UTC', 'YYYY-MM-DD'), '') as day, -1 as d from old_rows`;
    this.addSql(fn('counted', plus));
    this.addSql(fn('recounted', `${plus} union all ${minus}`));
    this.addSql(fn('uncounted', minus));
    this.addSql(`create trigger "counted" after insert on "articles" referencing new table as new_rows for each statement execute function "articles_counted_fn"();`);
    this.addSql(`create trigger "recounted" after update on "articles" referencing old table as old_rows new table as new_rows for each statement execute function "articles_recounted_fn"();`);
    this.addSql(`create trigger "uncounted" after delete on "articles" referencing old table as old_rows for each statement execute function "articles_uncounted_fn"();`);
    this.addSql(`insert into "article_counts" (account_id, site_id, status, day, n)
  select account_id, site_id, status, coalesce(to_char(published_at at time zone 'UTC', 'YYYY-MM-DD'), ''), count(*) from "articles" group by 1, 2, 3, 4;`);
  }

  override down(): void | Promise<void> {
    for (const name of ['counted', 'recounted', 'uncounted']) {
      this.addSql(`drop trigger if exists "${name}" on "articles";`);
      this.addSql(`drop function if exists "articles_${name}_fn"();`);
    }
    this.addSql(`drop table if exists "article_counts" cascade;`);
  }

}
