<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Htaccess;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\PeerProcess;
use Kiln\Tests\Support\PhpFpmProcess;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/**
 * An uploads folder whose .htaccess turns PHP off (the four ways apps write it), with a script planted in
 * it: on every tier the script is refused with 403, never run and never sent as source.
 */
final class EngineOffTest extends TestCase
{
    private const FOLDERS = [
        'flag' => "php_flag engine off\n",
        'admin' => "<IfModule mod_php.c>\nphp_admin_flag engine off\n</IfModule>\n",
        'remove' => "RemoveHandler .php .phtml\n",
        'handler' => "SetHandler default-handler\n",
    ];

    /** @return array<string, array{string}> */
    public static function tiers(): array
    {
        return ['sequential' => ['sequential'], 'fork' => ['fork'], 'isolated' => ['isolated'], 'fastcgi' => ['fastcgi']];
    }

    #[DataProvider('tiers')]
    public function testAScriptPlantedUnderAnEngineOffFolderIsNeverRun(string $tier): void
    {
        $root = PeerProcess::tempDir('kiln-engine-off');
        $fpm = null;
        $kiln = null;
        try {
            $marker = "$root/ran";
            file_put_contents("$root/ok.php", '<?php echo "ok";');
            $planted = '<?php file_put_contents(' . var_export($marker, true) . ', __FILE__, FILE_APPEND); echo "RAN";';
            foreach (self::FOLDERS as $folder => $htaccess) {
                mkdir("$root/uploads/$folder/2026", 0o755, true);
                file_put_contents("$root/uploads/$folder/.htaccess", $htaccess);
                file_put_contents("$root/uploads/$folder/2026/shell.php", $planted);
            }
            $args = ["--tier=$tier", '--workers=1', '--pool-size=1'];
            if ($tier === 'fastcgi') {
                self::assertTrue(is_executable(PhpFpmProcess::BINARY), 'php-fpm8.2 is missing: scripts/install-deps.sh dev installs it');
                $fpm = PhpFpmProcess::start(children: 1);
                $args[] = '--fastcgi=' . $fpm->address();
            }
            $kiln = KilnProcess::start($root, $args);
            $base = $kiln->baseUrl();
            self::assertSame([200, 'ok'], self::statusAndBody(HttpClient::get("$base/ok.php", [], 10.0)), 'scripts elsewhere run: ' . $kiln->log());
            foreach (array_keys(self::FOLDERS) as $folder) {
                foreach (["/uploads/$folder/2026/shell.php", "/uploads/$folder/2026/shell", "/uploads/$folder/2026/shell.php/x"] as $path) {
                    $response = HttpClient::get($base . $path, [], 10.0);
                    self::assertSame(403, $response['status'], "$path on the $tier tier: " . $response['body']);
                    self::assertStringNotContainsString('RAN', $response['body'], $path);
                    self::assertStringNotContainsString('<?php', $response['body'], "$path: the source is not sent either");
                }
            }
            self::assertFileDoesNotExist($marker, 'a planted script ran on the ' . $tier . ' tier');
            $kiln->waitForLog('~/uploads/flag/2026/shell\.php: 403, not run: PHP is off for it \(php_flag engine off~', 5.0);
            $kiln->waitForLog('~/uploads/handler/2026/shell\.php: 403, not run: .*SetHandler default-handler~', 5.0);
            self::assertStringNotContainsString('--php-ini', $kiln->log(), 'no advice to turn PHP off for the whole site');
        } finally {
            $kiln?->stop();
            $fpm?->stop();
            PeerProcess::removeDir($root);
        }
    }

    /**
     * @param array{status: int, body: string} $response
     * @return array{int, string}
     */
    private static function statusAndBody(array $response): array
    {
        return [$response['status'], $response['body']];
    }
}
