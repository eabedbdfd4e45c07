<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site\Htaccess;

use Kiln\Site\Htaccess\HtaccessRules;
use Kiln\Site\Htaccess\Outcome;
use Kiln\Site\Htaccess\RequestFacts;
use Kiln\Site\Htaccess\Verdict;

/**
 * Sites in a FakeFilesystem under /srv/www, and the stock .htaccess files of the apps Kiln must run
 * unmodified, written from their documented structure.
 */
final class Fixtures
{
    public const ROOT = '/srv/www';

    /** WordPress's generated block (Settings → Permalinks), with the Authorization pass-through rule. */
    public const WORDPRESS = <<<'TXT'
        # BEGIN WordPress
        # Lines between the BEGIN and END markers are written by WordPress
        # itself; edits made inside them are lost on the next save.
        <IfModule mod_rewrite.c>
        RewriteEngine On
        RewriteRule .* - [E=HTTP_AUTHORIZATION:%{HTTP:Authorization}]
        RewriteBase /
        RewriteRule ^index\.php$ - [L]
        RewriteCond %{REQUEST_FILENAME} !-f
        RewriteCond %{REQUEST_FILENAME} !-d
        RewriteRule . /index.php [L]
        </IfModule>

        # END WordPress
        TXT;

    /** What DokuWiki ships in data/, conf/ and inc/: refuse everything, with both access modules. */
    public const DOKUWIKI_DENY = <<<'TXT'
        ## keep web clients out of this directory
        <IfModule mod_authz_core.c>
            Require all denied
        </IfModule>
        <IfModule !mod_authz_core.c>
            Order allow,deny
            Deny from all
        </IfModule>
        TXT;

    /** DokuWiki's root .htaccess.dist; `%s` is '#' (as shipped: rewriting commented out) or '' (enabled). */
    public const DOKUWIKI_ROOT = <<<'TXT'
        ## Indexes and MultiViews are best off; symlinks may be needed for rewriting
        #Options -Indexes -MultiViews +FollowSymLinks

        ## keep the htaccess, README, VERSION and COPYING files private
        <Files ~ "^([\._]ht|README$|VERSION$|COPYING$)">
            <IfModule mod_authz_core.c>
                Require all denied
            </IfModule>
            <IfModule !mod_authz_core.c>
                Order allow,deny
                Deny from all
            </IfModule>
        </Files>

        ## no access to git metadata
        <IfModule alias_module>
            RedirectMatch 404 /\.git
        </IfModule>

        ## nice URLs ($conf['userewrite'] = 1): uncomment these
        %sRewriteEngine on
        %s
        %sRewriteRule ^_media/(.*)              lib/exe/fetch.php?media=$1  [QSA,L]
        %sRewriteRule ^_detail/(.*)             lib/exe/detail.php?media=$1  [QSA,L]
        %sRewriteRule ^_export/([^/]+)/(.*)     doku.php?do=export_$1&id=$2  [QSA,L]
        %sRewriteRule ^$                        doku.php  [L]
        %sRewriteCond %{REQUEST_FILENAME}       !-f
        %sRewriteCond %{REQUEST_FILENAME}       !-d
        %sRewriteRule (.*)                      doku.php?id=$1  [QSA,L]
        %sRewriteRule ^index.php$               doku.php
        %s
        ## set the base when DokuWiki is not at the document root
        %sRewriteBase /dokuwiki
        %s
        ## XML-RPC only over HTTPS
        %sRewriteCond %{HTTPS} !=on
        %sRewriteRule ^lib/exe/xmlrpc.php$      https://%{SERVER_NAME}%{REQUEST_URI} [L,R=301]
        TXT;

    public static function dokuwikiRoot(bool $rewrite): string
    {
        return str_replace('%s', $rewrite ? '' : '#', self::DOKUWIKI_ROOT);
    }

    /** @param array<string, string> $files path under ROOT => contents */
    public static function rules(array $files, ?FakeFilesystem &$fs = null, ?\Closure $clock = null): HtaccessRules
    {
        $absolute = [];
        foreach ($files as $path => $contents) {
            $absolute[self::ROOT . '/' . ltrim($path, '/')] = $contents;
        }
        $fs = new FakeFilesystem($absolute);
        $fs->mkdir(self::ROOT);
        return new HtaccessRules(self::ROOT, $fs, $clock);
    }

    /** @param array<string, string> $headers */
    public static function request(string $target, string $method = 'GET', array $headers = [], string $ip = '192.0.2.10', bool $https = false): RequestFacts
    {
        [$path, $query] = explode('?', $target, 2) + [1 => ''];
        return new RequestFacts($method, $path, $query, $headers + ['host' => 'example.com'], $ip, $https);
    }

    /** An outcome as one line: "serve PATH[?QUERY]", "redirect STATUS LOCATION", "refuse STATUS". */
    public static function describe(Outcome $outcome): string
    {
        return match ($outcome->verdict) {
            Verdict::Proceed => 'serve ' . $outcome->path . ($outcome->query === '' ? '' : '?' . $outcome->query),
            Verdict::Redirect => "redirect {$outcome->status} {$outcome->location}",
            Verdict::Refuse => "refuse {$outcome->status}",
        };
    }
}
