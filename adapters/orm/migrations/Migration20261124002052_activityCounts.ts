import { Migration } from '@mikro-orm/migrations';

/**
 * `activity_counts`: activity entries per account, channel and UTC day, kept by two statement
 * triggers on `activity` (transition tables: one upsert per statement, not per row; counter rows
 * taken in key order so concurrent statements cannot deadlock), filled from the rows already
 * there. Creating the triggers locks `activity` against writes until the migration commits, so no
 * row is counted twice or missed. `activity prune` deletes the counts of the months it drops.
 */
export class Migration20261124002052_activityCounts extends Migration {

  override name = 'Migration20261124002052_activityCounts';

  override up(): void | Promise<void> {
    this.addSql(`create table "activity_counts" ("account_id" varchar(128) not null, "channel" varchar(8) not null, "day" varchar(10) not null, "n" bigint not null, primary key ("account_id", "channel", "day"));`);
    this.addSql(`create or replace function "activity_counted_fn"() returns trigger as \$\$ begin
  insert into activity_counts (account_id, channel, day, n)
    select account_id, channel, to_char(at at time zone 'UTC', 'YYYY-MM-DD'), count(*) from new_rows
    where account_id is not null group by 1, 2, 3 order by 1, 2, 3
    on conflict (account_id, channel, day) do update set n = activity_counts.n + excluded.n;
  return null;
end; \$\$ language plpgsql;`);
    this.addSql(`create or replace function "activity_uncounted_fn"() returns trigger as \$\$ begin
  update activity_counts c set n = c.n - d.n
    from (select account_id, channel, to_char(at at time zone 'UTC', 'YYYY-MM-DD') as day, count(*) as n from old_rows
      where account_id is not null group by 1, 2, 3 order by 1, 2, 3) d
    where c.account_id = d.account_id and c.channel = d.channel and c.day = d.day;
  return null;
end; \$\$ language plpgsql;`);
    this.addSql(`create trigger "counted" after insert on "activity" referencing new table as new_rows for each statement execute function "activity_counted_fn"();`);
    this.addSql(`create trigger "uncounted" after delete on "activity" referencing old table as old_rows for each statement execute function "activity_uncounted_fn"();`);
    this.addSql(`insert into "activity_counts" (account_id, channel, day, n)
  select account_id, channel, to_char(at at time zone 'UTC', 'YYYY-MM-DD'), count(*) from "activity" where account_id is not null group by 1, 2, 3;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger if exists "counted" on "activity";`);
    this.addSql(`drop trigger if exists "uncounted" on "activity";`);
    this.addSql(`drop function if exists "activity_counted_fn"();`);
    this.addSql(`drop function if exists "activity_uncounted_fn"();`);
    this.addSql(`drop table if exists "activity_counts" cascade;`);
  }

}
