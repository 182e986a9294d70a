import { Migration } from '@mikro-orm/migrations';

/**
 * Triggers announcing, on the event bus's channel, every change to a row the instances keep in
 * process (API keys but for a use alone, accounts, OAuth grants): see `announceChange` in
 * `src/entities.ts`. Generated from the entities.
 */
export class Migration20261123012232_changeNotifications extends Migration {

  override name = 'Migration20261123012232_changeNotifications';

  override up(): void | Promise<void> {
    this.addSql(`create or replace function "accounts_changed_fn"() returns trigger as \$\$ begin perform pg_notify('cs_events', 'account:' || old.id); return null; end; \$\$ language plpgsql;`);
    this.addSql(`create trigger "changed" AFTER UPDATE OR DELETE on "accounts" for each ROW execute function "accounts_changed_fn"();`);

    this.addSql(`create or replace function "api_keys_changed_fn"() returns trigger as \$\$ begin perform pg_notify('cs_events', 'key:' || old.id); return null; end; \$\$ language plpgsql;`);
    this.addSql(`create trigger "changed" AFTER UPDATE on "api_keys" for each ROW
  when (((to_jsonb(old.*) - 'last_used_at'::text) IS DISTINCT FROM (to_jsonb(new.*) - 'last_used_at'::text))) execute function "api_keys_changed_fn"();`);
    this.addSql(`create or replace function "api_keys_deleted_fn"() returns trigger as \$\$ begin perform pg_notify('cs_events', 'key:' || old.id); return null; end; \$\$ language plpgsql;`);
    this.addSql(`create trigger "deleted" AFTER DELETE on "api_keys" for each ROW execute function "api_keys_deleted_fn"();`);

    this.addSql(`create or replace function "oauth_payloads_grant_changed_fn"() returns trigger as \$\$ begin perform pg_notify('cs_events', 'oauth:Grant:' || old.id); return null; end; \$\$ language plpgsql;`);
    this.addSql(`create trigger "grant_changed" AFTER UPDATE OR DELETE on "oauth_payloads" for each ROW
  when (((old.model)::text = 'Grant'::text)) execute function "oauth_payloads_grant_changed_fn"();`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger if exists "changed" on "accounts";`);
    this.addSql(`drop function if exists "accounts_changed_fn"();`);

    this.addSql(`drop trigger if exists "changed" on "api_keys";`);
    this.addSql(`drop function if exists "api_keys_changed_fn"();`);
    this.addSql(`drop trigger if exists "deleted" on "api_keys";`);
    this.addSql(`drop function if exists "api_keys_deleted_fn"();`);

    this.addSql(`drop trigger if exists "grant_changed" on "oauth_payloads";`);
    this.addSql(`drop function if exists "oauth_payloads_grant_changed_fn"();`);
  }

}
