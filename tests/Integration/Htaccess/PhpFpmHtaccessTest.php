<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Htaccess;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\PeerProcess;
use Kiln\Tests\Support\PhpFpmProcess;
use PHPUnit\Framework\TestCase;

/** `php_value` and `SetEnv` of an .htaccess file reach a real php-fpm behind `--tier=fastcgi`. */
final class PhpFpmHtaccessTest extends TestCase
{
    public function testPhpValueGoesToPhpFpmAsPhpValueAndSetEnvAsAParam(): void
    {
        $this->assertServed([
            'ini/.htaccess' => "php_value precision 5\nphp_value error_log \"/tmp/kiln fpm;test.log\"\nSetEnv SITE kiln\n",
            'ini/show.php' => '<?php echo ini_get("precision"), "|", ini_get("error_log"), "|", $_SERVER["SITE"] ?? "";',
        ], '/ini/show.php', '5|/tmp/kiln fpm;test.log|kiln');
    }

    /** php-fpm, like php-cgi, runs PATH_TRANSLATED as the script when REDIRECT_URL comes with it: it does not. */
    public function testARewriteToAScriptWithPathInfoRunsItWithThatPathInfo(): void
    {
        $this->assertServed([
            '.htaccess' => "RewriteEngine On\nRewriteRule ^principals/users/(.*)$ caldav.php/$1 [L]\n",
            'caldav.php' => '<?php echo $_SERVER["SCRIPT_NAME"], "|", $_SERVER["PATH_INFO"] ?? "none";',
        ], '/principals/users/alice/', '/caldav.php|/alice/');
    }

    /**
     * Serves $files (path in the document root => content) from a php-fpm of one child behind `--tier=fastcgi` and
     * asserts that GET $target answers 200 with $body.
     *
     * @param array<string, string> $files
     */
    private function assertServed(array $files, string $target, string $body): void
    {
        if (!is_executable(PhpFpmProcess::BINARY)) {
            self::fail('php-fpm8.2 is not installed (apt-get install php8.2-fpm): scripts/install-deps.sh installs it');
        }
        $root = PeerProcess::tempDir('kiln-htaccess-fpm');
        $fpm = null;
        $kiln = null;
        try {
            foreach ($files as $path => $content) {
                @mkdir(\dirname("$root/$path"), 0777, true);
                file_put_contents("$root/$path", $content);
            }
            $fpm = PhpFpmProcess::start(children: 1);
            $kiln = KilnProcess::start($root, ['--tier=fastcgi', '--fastcgi=' . $fpm->address(), '--workers=1']);
            $response = HttpClient::get($kiln->baseUrl() . $target);
            self::assertSame([200, $body], [$response['status'], $response['body']], $kiln->log() . $fpm->diagnostics());
        } finally {
            $kiln?->stop();
            $fpm?->stop();
            PeerProcess::removeDir($root);
        }
    }
}
