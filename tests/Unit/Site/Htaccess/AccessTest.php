<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site\Htaccess;

use Kiln\Site\Htaccess\IpRange;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/** mod_authz_core / mod_authz_host (Require) and mod_access_compat (Order, Allow, Deny) in .htaccess. */
final class AccessTest extends TestCase
{
    /**
     * An .htaccess at the root, a client address, whether /f.txt is served.
     *
     * @return iterable<string, array{string, string, bool}>
     */
    public static function rules(): iterable
    {
        yield 'nothing: granted' => ['', '192.0.2.1', true];
        yield 'Require all denied' => ['Require all denied', '192.0.2.1', false];
        yield 'Require all granted' => ['Require all granted', '192.0.2.1', true];
        yield 'Require ip matching' => ['Require ip 192.0.2.1', '192.0.2.1', true];
        yield 'Require ip not matching' => ['Require ip 192.0.2.1', '192.0.2.2', false];
        yield 'Require ip partial' => ['Require ip 10 192.0', '192.0.2.2', true];
        yield 'Require ip CIDR' => ['Require ip 192.0.2.0/28', '192.0.2.15', true];
        yield 'Require ip CIDR outside' => ['Require ip 192.0.2.0/28', '192.0.2.16', false];
        yield 'Require ip IPv6' => ['Require ip 2001:db8::/32', '2001:db8::5', true];
        yield 'Require local' => ['Require local', '127.0.0.1', true];
        yield 'Require local from afar' => ['Require local', '192.0.2.1', false];
        yield 'lines are a RequireAny' => ["Require ip 10.0.0.1\nRequire ip 192.0.2.1", '192.0.2.1', true];
        yield 'RequireAll with not ip, allowed' => ["<RequireAll>\nRequire all granted\nRequire not ip 192.0.2.9\n</RequireAll>", '192.0.2.1', true];
        yield 'RequireAll with not ip, refused' => ["<RequireAll>\nRequire all granted\nRequire not ip 192.0.2.9\n</RequireAll>", '192.0.2.9', false];
        yield 'RequireAny' => ["<RequireAny>\nRequire ip 10.0.0.1\nRequire method GET\n</RequireAny>", '192.0.2.1', true];
        yield 'RequireNone inside RequireAll' => ["<RequireAll>\nRequire all granted\n<RequireNone>\nRequire ip 192.0.2.1\n</RequireNone>\n</RequireAll>", '192.0.2.1', false];
        yield 'a lone not is not enough' => ['Require not ip 10.0.0.1', '192.0.2.1', false];
        yield 'Require env' => ["Require env NOPE", '192.0.2.1', false];
        yield 'Deny from all' => ['Deny from all', '192.0.2.1', false];
        yield 'Order allow,deny alone refuses' => ['Order allow,deny', '192.0.2.1', false];
        yield 'Order deny,allow alone allows' => ['Order deny,allow', '192.0.2.1', true];
        yield 'allow,deny with Allow from all' => ["Order allow,deny\nAllow from all", '192.0.2.1', true];
        yield 'allow,deny: Deny wins' => ["Order allow,deny\nAllow from all\nDeny from 192.0.2.1", '192.0.2.1', false];
        yield 'deny,allow: Allow wins' => ["Order deny,allow\nDeny from all\nAllow from 192.0.2.1", '192.0.2.1', true];
        yield 'deny,allow: others refused' => ["Order Deny,Allow\nDeny from all\nAllow from 192.0.2.1", '192.0.2.2', false];
        yield 'partial address' => ["Order deny,allow\nDeny from all\nAllow from 192.0.2", '192.0.2.77', true];
        yield 'netmask' => ["Order deny,allow\nDeny from all\nAllow from 192.0.0.0/255.255.0.0", '192.0.2.77', true];
        yield 'several hosts on one line' => ["Order deny,allow\nDeny from all\nAllow from 10.0.0.1 192.0.2.1", '192.0.2.1', true];
        yield 'mutual-failure' => ["Order mutual-failure\nAllow from all\nDeny from 192.0.2.1", '192.0.2.1', false];
        yield 'Limit only for its methods' => ["<Limit POST PUT>\nDeny from all\n</Limit>", '192.0.2.1', true];
        yield 'LimitExcept for the others' => ["<LimitExcept POST>\nRequire all denied\n</LimitExcept>", '192.0.2.1', false];
        yield 'both modules must allow' => ["Require all granted\nDeny from all", '192.0.2.1', false];
        yield 'files section denies its file' => ["<Files f.txt>\nRequire all denied\n</Files>", '192.0.2.1', false];
        yield 'files section for another file' => ["<Files g.txt>\nRequire all denied\n</Files>", '192.0.2.1', true];
        yield 'FilesMatch' => ["<FilesMatch \"\\.(txt|log)$\">\nOrder allow,deny\nDeny from all\n</FilesMatch>", '192.0.2.1', false];
        yield 'unsupported Require never grants' => ['Require valid-user', '192.0.2.1', false];
    }

    #[DataProvider('rules')]
    public function testAccess(string $htaccess, string $ip, bool $served): void
    {
        $site = Fixtures::rules(['f.txt' => 'x', '.htaccess' => $htaccess]);
        self::assertSame($served ? 'serve /f.txt' : 'refuse 403', Fixtures::describe($site->forRequest(Fixtures::request('/f.txt', ip: $ip))));
    }

    public function testADeeperFileReplacesTheParentsAccessRules(): void
    {
        $site = Fixtures::rules(['.htaccess' => 'Require all denied', 'public/.htaccess' => 'Require all granted', 'public/f.txt' => 'x', 'f.txt' => 'x']);
        self::assertSame('refuse 403', Fixtures::describe($site->forRequest(Fixtures::request('/f.txt'))));
        self::assertSame('serve /public/f.txt', Fixtures::describe($site->forRequest(Fixtures::request('/public/f.txt'))));
    }

    public function testAccessRulesApplyBelowTheirDirectoryAndToMissingFiles(): void
    {
        $site = Fixtures::rules(['private/.htaccess' => "Order allow,deny\nDeny from all", 'private/a/b/c.txt' => 'x']);
        self::assertSame('refuse 403', Fixtures::describe($site->forRequest(Fixtures::request('/private/a/b/c.txt'))));
        self::assertSame('refuse 403', Fixtures::describe($site->forRequest(Fixtures::request('/private/nothing/here'))));
        self::assertSame('refuse 403', Fixtures::describe($site->forRequest(Fixtures::request('/private'))));
    }

    public function testParentFilesSectionsStillApplyAfterAChildGrants(): void
    {
        $site = Fixtures::rules(['.htaccess' => "<Files secret.txt>\nRequire all denied\n</Files>", 'sub/.htaccess' => 'Require all granted', 'sub/secret.txt' => 'x']);
        self::assertSame('refuse 403', Fixtures::describe($site->forRequest(Fixtures::request('/sub/secret.txt'))));
    }

    public function testAccessIsCheckedAgainForARewrittenPath(): void
    {
        $site = Fixtures::rules(['.htaccess' => "RewriteEngine On\nRewriteRule ^open$ private/x.txt [L]", 'private/.htaccess' => 'Require all denied', 'private/x.txt' => 'x']);
        self::assertSame('refuse 403', Fixtures::describe($site->forRequest(Fixtures::request('/open'))));
    }

    public function testForTargetChecksTheFileTheDocumentRootPicked(): void
    {
        $site = Fixtures::rules(['.htaccess' => "<Files index.php>\nRequire ip 10.0.0.1\n</Files>\nDirectoryIndex index.php", 'index.php' => '<?php']);
        $request = Fixtures::request('/');
        self::assertSame('serve /', Fixtures::describe($site->forRequest($request)));
        self::assertSame('refuse 403', Fixtures::describe($site->forTarget($request, '/index.php')));
    }

    /** @return iterable<string, array{string, string, bool}> */
    public static function ranges(): iterable
    {
        yield 'full v4' => ['10.1.2.3', '10.1.2.3', true];
        yield 'full v4 other' => ['10.1.2.3', '10.1.2.4', false];
        yield 'partial' => ['10.1', '10.1.200.3', true];
        yield 'partial with dot' => ['10.1.', '10.10.0.1', false];
        yield 'cidr /9' => ['10.0.0.0/9', '10.127.0.1', true];
        yield 'cidr /9 outside' => ['10.0.0.0/9', '10.128.0.1', false];
        yield 'netmask' => ['10.0.0.0/255.0.0.0', '10.9.9.9', true];
        yield 'mapped v4 client' => ['10.0.0.0/8', '::ffff:10.1.1.1', true];
        yield 'v6' => ['2001:db8::/48', '2001:db8:0:1::1', true];
        yield 'v6 outside' => ['2001:db8::/48', '2001:db8:1::1', false];
        yield 'v4 range, v6 client' => ['10.0.0.0/8', '2001:db8::1', false];
        yield 'junk client' => ['10.0.0.0/8', 'nope', false];
    }

    #[DataProvider('ranges')]
    public function testIpRanges(string $range, string $ip, bool $contains): void
    {
        self::assertSame($contains, IpRange::parse($range)?->contains($ip));
    }

    public function testHostNamesAndBadMasksAreNotRanges(): void
    {
        foreach (['example.com', '10.0.0.0/33', '10.0.0.0/255.0.255.0', '1.2.3.4.5', ''] as $text) {
            self::assertNull(IpRange::parse($text), $text);
        }
    }
}
