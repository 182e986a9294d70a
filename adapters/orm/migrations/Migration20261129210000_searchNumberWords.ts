import { Migration } from '@mikro-orm/migrations';
import { LOCK_WRITES } from './Migration20261129200000_searchTextPunctuation.ts';

/**
 * A word of letters and digits (`Crème2`, `Étape3`, `ﬁ2`, `Ⅻ2`: the parser's `numword`, and its
 * hyphenated kinds `numhword`, `hword_numpart`) is folded by `unaccent` as a word of letters is:
 * `cs_search` mapped them to `simple` alone, so `creme2` did not find *Crème2*, which the memory
 * store (and the contract: matching ignores accents) finds. Every article's stored search vectors
 * are computed again by rewriting its row as it is (the term counts follow through their
 * trigger): one pass over the table, as the earlier searched-text migrations did.
 */
export class Migration20261129210000_searchNumberWords extends Migration {

  override name = 'Migration20261129210000_searchNumberWords';

  override up(): void | Promise<void> {
    this.addSql(LOCK_WRITES);
    this.addSql(`alter text search configuration cs_search alter mapping for numword, numhword, hword_numpart with unaccent, simple;`);
    this.addSql(`update "articles" set "title" = "title", "target_keyword" = "target_keyword", "body" = "body";`);
  }

  override down(): void | Promise<void> {
    this.addSql(LOCK_WRITES);
    this.addSql(`alter text search configuration cs_search alter mapping for numword, numhword, hword_numpart with simple;`);
    this.addSql(`update "articles" set "title" = "title", "target_keyword" = "target_keyword", "body" = "body";`);
  }

}
