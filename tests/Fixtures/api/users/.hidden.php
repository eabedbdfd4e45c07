<?php

declare(strict_types=1);

throw new LogicException('a hidden file must never be loaded');
