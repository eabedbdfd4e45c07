<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Performance;

use Kiln\App\App;
use Kiln\App\Handler\Internal\PreparedHandler;
use Kiln\App\Internal\Dispatcher;
use Kiln\Http\Internal\HttpCore;
use Kiln\Http\Internal\ResponseSender;
use Kiln\Isolation\FastCgi\FastCgiClient;
use Kiln\Isolation\FastCgi\Internal\Connection;
use Kiln\Isolation\PhpCgi\PhpCgiClient;
use Kiln\Isolation\PhpCgi\PhpCgiPool;
use Kiln\Site\Isolated\PhpCgiRunner;
use Kiln\Site\Sequential\ScriptOutput;
use Kiln\Site\Sequential\SequentialRunner;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/**
 * PHP's tracing JIT compiles no trace through a finally block: a method holding one runs in the
 * interpreter, and so does every trace that reaches it, callers' traces included. The methods every request
 * passes through have none (docs/design/010-no-finally-on-the-hot-path.md).
 */
final class NoFinallyOnTheHotPathTest extends TestCase
{
    /** @return iterable<string, array{class-string, string}> */
    public static function hotMethods(): iterable
    {
        $methods = [
            [HttpCore::class, 'respond'],
            [HttpCore::class, 'sendWhole'],
            [ResponseSender::class, 'writeWhole'],
            [App::class, 'handle'],
            [Dispatcher::class, 'handle'],
            [PreparedHandler::class, 'call'],
            [SequentialRunner::class, 'run'],
            [SequentialRunner::class, 'execute'],
            [SequentialRunner::class, 'finish'],
            [ScriptOutput::class, 'begin'],
            [ScriptOutput::class, 'end'],
            [PhpCgiRunner::class, 'run'],
            [PhpCgiClient::class, 'request'],
            [PhpCgiPool::class, 'acquire'],
            [PhpCgiPool::class, 'await'],
            [FastCgiClient::class, 'request'],
            [Connection::class, 'fill'],
            [Connection::class, 'await'],
            [Connection::class, 'suspend'],
        ];
        foreach ($methods as [$class, $method]) {
            yield "$class::$method" => [$class, $method];
        }
    }

    /** @param class-string $class */
    #[DataProvider('hotMethods')]
    public function testHasNoFinallyBlock(string $class, string $method): void
    {
        self::assertNotContains(T_FINALLY, self::tokens(new \ReflectionMethod($class, $method)));
    }

    public function testTheCheckSeesAFinallyBlock(): void
    {
        $withFinally = new class {
            public function run(): int
            {
                try {
                    return 1;
                } finally {
                    echo '';
                }
            }
        };
        self::assertContains(T_FINALLY, self::tokens(new \ReflectionMethod($withFinally, 'run')));
    }

    /** @return list<int> the token ids of the method's source lines */
    private static function tokens(\ReflectionMethod $method): array
    {
        $file = $method->getFileName();
        self::assertIsString($file);
        $lines = \array_slice(file($file) ?: [], $method->getStartLine() - 1, $method->getEndLine() - $method->getStartLine() + 1);
        $ids = [];
        foreach (token_get_all('<?php ' . implode('', $lines)) as $token) {
            if (\is_array($token)) {
                $ids[] = $token[0];
            }
        }
        return $ids;
    }
}
