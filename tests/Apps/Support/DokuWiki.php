<?php

declare(strict_types=1);

namespace Kiln\Tests\Apps\Support;

/**
 * Debian's `dokuwiki` (2022-07-31a "Igor") served from a throwaway copy laid out as upstream ships it: the code of
 * /usr/share/dokuwiki, its conf/ (a copy of /etc/dokuwiki) and data/ (a copy of /var/lib/dokuwiki/data) inside
 * the document root, each protected only by its own `.htaccess` — the layout where a server that ignores
 * `.htaccess` leaks pages and password hashes. Debian's inc/preload.php (which points DokuWiki at /etc) is replaced
 * by an empty one, DokuWiki's documented hook, so nothing outside the copy is read or written.
 */
final class DokuWiki
{
    public const SOURCE = '/usr/share/dokuwiki';
    public const USER = 'editor';
    public const PASSWORD = 'Kiln-wiki-pass-3318';
    public const PAGE = 'kiln:test';

    public static function isInstalled(): bool
    {
        return is_file(self::SOURCE . '/doku.php') && is_dir('/etc/dokuwiki') && is_dir('/var/lib/dokuwiki/data');
    }

    public static function prepare(): SiteCopy
    {
        $copy = SiteCopy::of(self::SOURCE, 'kiln-apps-dokuwiki');
        SiteCopy::copyTree('/etc/dokuwiki', $copy->root() . '/conf');
        SiteCopy::copyTree('/var/lib/dokuwiki/data', $copy->root() . '/data');
        $copy->write('inc/preload.php', "<?php\n// tests/Apps: upstream layout, DOKU_CONF is conf/ of this copy (Debian's preload points to /etc/dokuwiki)\n");
        $copy->write('conf/local.php', <<<'PHP'
            <?php
            // Written by tests/Apps/Support/DokuWiki.php
            $conf['title'] = 'Kiln Wiki';
            $conf['lang'] = 'en';
            $conf['license'] = 'cc-by-sa';
            $conf['savedir'] = './data';
            $conf['useacl'] = 1;
            $conf['superuser'] = '@admin';
            $conf['userewrite'] = 0;

            PHP);
        $copy->write('conf/acl.auth.php', "# acl.auth.php\n# <?php exit()?>\n*\t@ALL\t1\n*\t@user\t8\n");
        $copy->write('conf/users.auth.php', "# users.auth.php\n# <?php exit()?>\n" . self::USER . ':'
            . password_hash(self::PASSWORD, PASSWORD_BCRYPT) . ":Kiln Editor:editor@example.com:admin,user\n");
        $copy->write('doku.php~', "<?php // an editor's backup: never served\n\$secret = '" . self::PASSWORD . "';\n");
        $copy->write('.git/config', "[remote \"origin\"]\n\turl = https://deploy:" . self::PASSWORD . "@git.example/wiki\n");
        $copy->handToWebServer();
        return $copy;
    }

    public static function flow(Run $run, Browser $user, Browser $visitor): void
    {
        $page = '/doku.php?id=' . self::PAGE;
        $run->expect('start page', $visitor->get('/doku.php'), 200, ['Kiln Wiki', 'do=login']);
        $run->expect('template stylesheet (lib/exe/css.php)', $visitor->get('/lib/exe/css.php?t=dokuwiki&tseed=1'), 200, ['.dokuwiki']);
        $logo = $run->expect('template image (static file)', $visitor->get('/lib/tpl/dokuwiki/images/logo.png'), 200);
        $run->assert('template image is a PNG', str_starts_with($logo->body, "\x89PNG"), 'got ' . $logo->header('content-type'));
        $run->expect('anonymous edit is refused', $visitor->get("$page&do=edit"), [200, 403], ['do=login'], ['name="wikitext"']);
        $form = $run->expect('login form', $user->get("$page&do=login"), 200, ['name="sectok"', 'name="u"'])->form('id="dw__login"');
        $run->expect(
            'log in',
            $user->post($page, [...$form, 'u' => self::USER, 'p' => self::PASSWORD, 'do' => 'login']),
            [200, 302, 303],
            [],
            ['dw__login'],
        );
        $run->expect('logged in', $user->get($page), 200, ['Kiln Editor', 'do=logout']);
        self::save($run, $user, 'create', "====== Kiln test ======\nFirst version, written through **Kiln**.\n", 'first version');
        $run->expect('view the new page', $visitor->get($page), 200, ['<h1', 'Kiln test', 'First version, written through <strong>Kiln</strong>.']);
        // The next revision needs a later second (DokuWiki keys revisions by timestamp): a user's pause, not a wait for readiness.
        time_sleep_until(floor(microtime(true)) + 1.05);
        self::save($run, $user, 'edit', "====== Kiln test ======\nSecond version.\n\n  * a list item\n", 'second version');
        $run->expect('view the edited page', $visitor->get($page), 200, ['Second version.', '<li class="level1">'], ['First version']);
        $history = $run->expect('page history (do=revisions)', $user->get("$page&do=revisions"), 200, ['first version', 'second version']);
        $old = $history->match('~[?&;]rev=(\d{9,})~');
        $run->expect('old revision from the history', $visitor->get("$page&rev=$old"), 200, ['First version', 'old revision'], ['Second version']);
        $logout = $user->get($page)->match('~do=logout&amp;sectok=([0-9a-f]+)~');
        $run->expect('log out', $user->get("$page&do=logout&sectok=$logout"), [302, 303], ['Location: ' . self::PAGE]);
        $run->expect('logged out', $user->get($page), 200, ['do=login'], ['do=logout']);
        self::accessChecks($run, $visitor);
    }

    private static function save(Run $run, Browser $user, string $what, string $text, string $summary): void
    {
        $page = '/doku.php?id=' . self::PAGE;
        $edit = $run->expect("$what: edit form", $user->get("$page&do=edit"), 200, ['name="wikitext"', 'name="sectok"']);
        $fields = $edit->form('id="dw__editform"');
        $run->expect(
            "$what: save",
            $user->post($page, [...$fields, 'wikitext' => $text, 'summary' => $summary, 'do[save]' => 'Save']),
            [302, 303],
            ['Location: ' . self::PAGE],
        );
    }

    private static function accessChecks(Run $run, Browser $visitor): void
    {
        $hash = 'Kiln Editor:editor@example.com';
        $checks = [
            '/data/pages/kiln/test.txt' => ['Second version'], '/data/pages/wiki/welcome.txt' => ['Welcome'],
            '/data/attic/' => [], '/conf/users.auth.php' => [$hash], '/conf/local.php' => [], '/conf/dokuwiki.php' => [],
            '/inc/init.php' => [], '/inc/' => [], '/bin/indexer.php' => [], '/.htaccess' => ['Require all denied'],
            '/data/.htaccess' => [], '/VERSION' => ['2022'], '/.git/config' => [self::PASSWORD],
        ];
        foreach ($checks as $path => $secrets) {
            $run->refused("refuses $path", $visitor->get($path), $secrets, true);
        }
        $run->refused('refuses /doku.php~', $visitor->get('/doku.php~'), [self::PASSWORD], false);
    }
}
