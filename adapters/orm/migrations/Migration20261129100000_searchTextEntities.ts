import { Migration } from '@mikro-orm/migrations';

/** `cs_search_text` with what a body's `&amp;` becomes in the searched text. */
const SEARCH_TEXT = (amp: string) => `create or replace function cs_search_text(body text) returns text language sql immutable strict parallel safe as $$
  select translate(
    replace(replace(replace(replace(replace(
      regexp_replace(
        regexp_replace(left(body, 200000), '</?(?:address|article|aside|blockquote|br|caption|dd|details|div|dl|dt|figcaption|figure|footer|h1|h2|h3|h4|h5|h6|header|hr|img|li|main|ol|p|pre|section|summary|table|tbody|td|tfoot|th|thead|tr|ul)(?:[\\t\\n\\f\\r /][^>]*)?>', ' ', 'gi'),
        '<[^>]*>', '', 'g'),
      '&lt;', '<' || chr(8203)), '&gt;', '>'), '&nbsp;', chr(160)), '&quot;', '"'), '&amp;', ${amp}),
    chr(64976) || chr(64977), '  ')
$$;`;

/**
 * A `&` of a body's text (`&amp;`) is followed by a zero-width space in the searched text (the
 * core's `SEARCH_TEXT_AMP`), as a `<` is: the text-search parser read `&nbsp;` or `R&D;` written
 * in an article as an XML entity and dropped its word, which the other adapters find. Every
 * article's stored `search_vector` is computed again by rewriting its body as it is (the term
 * counts follow through their trigger): one pass over the table.
 */
export class Migration20261129100000_searchTextEntities extends Migration {

  override name = 'Migration20261129100000_searchTextEntities';

  override up(): void | Promise<void> {
    this.addSql(SEARCH_TEXT(`'&' || chr(8203)`));
    this.addSql(`update "articles" set "body" = "body";`);
  }

  override down(): void | Promise<void> {
    this.addSql(SEARCH_TEXT(`'&'`));
    this.addSql(`update "articles" set "body" = "body";`);
  }

}
