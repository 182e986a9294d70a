import { Migration } from '@mikro-orm/migrations';

/**
 * The activity log partitioned by month of `at` (range partitions `activity_pYYYYMM`, and
 * `activity_default` for rows of any month without one, such as history inserted by hand). Every
 * row of the old table is copied; months are made from the oldest row's to two months ahead, and
 * housekeeping makes the coming ones (`src/partitions.ts`). A partitioned table's unique keys must hold its partition key, so the
 * primary key is (id, at) and the idempotence key (channel, request_id, at); the journal's insert
 * skips a (channel, request_id) written within a day. Indexes serve the activity API: an
 * account's entries newest first, by time range, and by channel.
 */
export class Migration20261124000000_partitionedActivity extends Migration {

  override name = 'Migration20261124000000_partitionedActivity';

  override up(): void | Promise<void> {
    this.addSql(`alter table "activity" rename to "activity_unpartitioned";`);
    this.addSql(`alter index "activity_pkey" rename to "activity_unpartitioned_pkey";`);
    this.addSql(`alter index "activity_account_at_index" rename to "activity_unpartitioned_account_at_index";`);
    this.addSql(`alter index "activity_channel_request_unique" rename to "activity_unpartitioned_channel_request_unique";`);
    this.addSql(`create table "activity" ("id" varchar(128) not null, "account_id" varchar(128) null, "at" timestamptz(3) not null, "channel" varchar(8) not null, "actor" jsonb null, "action" text not null, "site_id" varchar(128) null, "article_id" varchar(128) null, "status" varchar(16) not null, "error_code" text null, "duration_ms" int not null, "request_id" varchar(200) not null, primary key ("id", "at")) partition by range ("at");`);
    this.addSql(`create index "activity_account_at_index" on "activity" ("account_id", "at", "id");`);
    this.addSql(`create index "activity_account_channel_at_index" on "activity" ("account_id", "channel", "at", "id");`);
    this.addSql(`alter table "activity" add constraint "activity_channel_request_unique" unique ("channel", "request_id", "at");`);
    this.addSql(`do $$
declare
  first_month timestamptz;
  m timestamptz;
begin
  select least(date_trunc('month', min("at"), 'UTC'), date_trunc('month', now(), 'UTC'))
    into first_month from "activity_unpartitioned";
  first_month := coalesce(first_month, date_trunc('month', now(), 'UTC'));
  m := first_month;
  while m <= date_trunc('month', now(), 'UTC') + interval '2 months' loop
    execute format('create table %I partition of "activity" for values from (%L) to (%L)',
      'activity_p' || to_char(m at time zone 'UTC', 'YYYYMM'), m, (m at time zone 'UTC' + interval '1 month') at time zone 'UTC');
    m := (m at time zone 'UTC' + interval '1 month') at time zone 'UTC';
  end loop;
end $$;`);
    this.addSql(`create table "activity_default" partition of "activity" default;`);
    this.addSql(`insert into "activity" select "id", "account_id", "at", "channel", "actor", "action", "site_id", "article_id", "status", "error_code", "duration_ms", "request_id" from "activity_unpartitioned";`);
    this.addSql(`drop table "activity_unpartitioned";`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "activity" rename to "activity_partitioned";`);
    this.addSql(`alter index "activity_pkey" rename to "activity_partitioned_pkey";`);
    this.addSql(`alter index "activity_account_at_index" rename to "activity_partitioned_account_at_index";`);
    this.addSql(`alter index "activity_channel_request_unique" rename to "activity_partitioned_channel_request_unique";`);
    this.addSql(`drop index if exists "activity_account_channel_at_index";`);
    this.addSql(`create table "activity" ("id" varchar(128) not null, "account_id" varchar(128) null, "at" timestamptz(3) not null, "channel" varchar(8) not null, "actor" jsonb null, "action" text not null, "site_id" varchar(128) null, "article_id" varchar(128) null, "status" varchar(16) not null, "error_code" text null, "duration_ms" int not null, "request_id" varchar(200) not null, primary key ("id"));`);
    this.addSql(`create index "activity_account_at_index" on "activity" ("account_id", "at");`);
    this.addSql(`alter table "activity" add constraint "activity_channel_request_unique" unique ("channel", "request_id");`);
    this.addSql(`insert into "activity" select * from "activity_partitioned" on conflict do nothing;`);
    this.addSql(`drop table "activity_partitioned" cascade;`);
  }

}
