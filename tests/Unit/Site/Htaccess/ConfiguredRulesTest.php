<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site\Htaccess;

use Kiln\Site\Htaccess\ConfiguredRules;
use Kiln\Site\Htaccess\HtaccessRules;
use PHPUnit\Framework\TestCase;

/** `.htaccess` rules written in app.php: read as if they opened the directory's `.htaccess` file. */
final class ConfiguredRulesTest extends TestCase
{
    private const FILES = [
        Fixtures::ROOT . '/index.php' => '<?php',
        Fixtures::ROOT . '/new.php' => '<?php',
        Fixtures::ROOT . '/private/secret.txt' => 'secret',
    ];

    public function testRulesGivenForTheRootApplyWithoutAnyFile(): void
    {
        $rules = $this->rules(['/' => "RewriteEngine On\nRewriteRule ^old$ /new.php [R=301,L]\n" . Fixtures::WORDPRESS]);
        self::assertSame('redirect 301 http://example.com/new.php', Fixtures::describe($rules->forRequest(Fixtures::request('/old'))));
        self::assertSame('serve /index.php', Fixtures::describe($rules->forRequest(Fixtures::request('/2024/a-post/'))));
        self::assertSame([], $rules->takeWarnings());
    }

    public function testRulesForADirectoryComeBeforeItsFileAndTheFileStillCounts(): void
    {
        $files = self::FILES + [Fixtures::ROOT . '/private/.htaccess' => "Header set X-From file\n"];
        $rules = $this->rules(['/private/' => 'Require all denied'], $files);
        self::assertSame('refuse 403', Fixtures::describe($rules->forRequest(Fixtures::request('/private/secret.txt'))));
        $open = $this->rules(['/private' => 'Header set X-From app'], $files);
        $outcome = $open->forRequest(Fixtures::request('/private/secret.txt'));
        self::assertSame('serve /private/secret.txt', Fixtures::describe($outcome));
        self::assertCount(2, $outcome->settings->headerActions(false), 'the app\'s Header line and the file\'s');
    }

    public function testWithoutReadingFilesOnlyTheAppsRulesApply(): void
    {
        $files = self::FILES + [Fixtures::ROOT . '/private/.htaccess' => "Require all denied\n"];
        $rules = new HtaccessRules(Fixtures::ROOT, new ConfiguredRules(Fixtures::ROOT, ['/' => 'RewriteEngine On'], false, new FakeFilesystem($files)));
        self::assertSame('serve /private/secret.txt', Fixtures::describe($rules->forRequest(Fixtures::request('/private/secret.txt'))));
    }

    public function testADirectoryThatIsNotAUrlPathIsRefusedAtOnce(): void
    {
        $this->expectException(\ValueError::class);
        new ConfiguredRules(Fixtures::ROOT, ['../etc/' => 'Require all granted']);
    }

    /**
     * @param array<string, string> $rules
     * @param array<string, string> $files
     */
    private function rules(array $rules, array $files = self::FILES): HtaccessRules
    {
        return new HtaccessRules(Fixtures::ROOT, new ConfiguredRules(Fixtures::ROOT, $rules, true, new FakeFilesystem($files)));
    }
}
